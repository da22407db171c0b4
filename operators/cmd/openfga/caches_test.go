package main

import (
	"os"
	"testing"
)

func TestBoundCachesDefaultsOnlyUnsetSizes(t *testing.T) {
	t.Setenv(cacheSizeEnv[0], "")
	os.Unsetenv(cacheSizeEnv[0])
	t.Setenv(cacheSizeEnv[1], "42")
	if err := boundCaches(); err != nil {
		t.Fatal(err)
	}
	if got := os.Getenv(cacheSizeEnv[0]); got != DefaultCacheSize {
		t.Errorf("%s = %q, want the default %s", cacheSizeEnv[0], got, DefaultCacheSize)
	}
	if got := os.Getenv(cacheSizeEnv[1]); got != "42" {
		t.Errorf("%s = %q, want the value set before, 42", cacheSizeEnv[1], got)
	}
}
