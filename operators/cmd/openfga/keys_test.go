package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestPresharedKeysFromFile: the keys of the file become OpenFGA's
// OPENFGA_AUTHN_PRESHARED_KEYS with method preshared; a file others may
// read, an empty one or a key with a comma is refused.
func TestPresharedKeysFromFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	t.Setenv("OPENFGA_AUTHN_METHOD", "")
	t.Setenv("OPENFGA_AUTHN_PRESHARED_KEYS", "")
	t.Setenv(presharedKeysFile, write("keys", "k1\n\n  k2 \n", 0o600))
	if err := presharedKeysFromFile(); err != nil {
		t.Fatal(err)
	}
	if got := os.Getenv("OPENFGA_AUTHN_PRESHARED_KEYS"); got != "k1,k2" {
		t.Errorf("OPENFGA_AUTHN_PRESHARED_KEYS = %q, want k1,k2", got)
	}
	if got := os.Getenv("OPENFGA_AUTHN_METHOD"); got != "preshared" {
		t.Errorf("OPENFGA_AUTHN_METHOD = %q, want preshared", got)
	}
	for name, file := range map[string]string{
		"readable by others": write("open", "k\n", 0o644),
		"empty":              write("empty", "\n", 0o600),
		"a comma":            write("comma", "a,b\n", 0o600),
		"missing":            filepath.Join(dir, "missing"),
	} {
		t.Setenv(presharedKeysFile, file)
		if err := presharedKeysFromFile(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
