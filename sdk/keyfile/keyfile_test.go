package keyfile

import (
	"os"
	"path/filepath"
	"testing"
)

// TestRead: the first non-empty line is the key; a file others may read,
// or one without a key, is refused.
func TestRead(t *testing.T) {
	file := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(file, []byte("\n  k3y \nignored\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if k, err := Read(file); err != nil || k != "k3y" {
		t.Errorf("Read = %q, %v; want k3y", k, err)
	}
	if err := os.Chmod(file, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(file); err == nil {
		t.Error("a key file readable by others was accepted")
	}
	if err := os.WriteFile(file, []byte("\n \n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(file, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(file); err == nil {
		t.Error("a key file without a key was accepted")
	}
	if _, err := Read(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("a missing key file was accepted")
	}
}
