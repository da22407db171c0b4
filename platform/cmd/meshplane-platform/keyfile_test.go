package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/meshplane/meshplane/sdk/keyfile"
)

// TestKeyFile: a key as a Secret volume holds it (group-readable, which
// the OpenFGA clients refuse) becomes a 0600 file they accept.
func TestKeyFile(t *testing.T) {
	dir := t.TempDir()
	from := filepath.Join(dir, "secret", "key")
	if err := os.MkdirAll(filepath.Dir(from), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(from, []byte("s3cr3t\n"), 0o440); err != nil {
		t.Fatal(err)
	}
	if _, err := keyfile.Read(from); err == nil {
		t.Fatal("the clients accept a group-readable key file; the copy is not needed")
	}
	to := filepath.Join(dir, "run", "key")
	if rc := keyFile([]string{"--from", from, "--to", to}); rc != 0 {
		t.Fatalf("key-file exited %d", rc)
	}
	st, err := os.Stat(to)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", st.Mode().Perm())
	}
	key, err := keyfile.Read(to)
	if err != nil || key != "s3cr3t" {
		t.Errorf("keyfile.Read: %q, %v", key, err)
	}
	if rc := keyFile([]string{"--from", from}); rc != 2 {
		t.Errorf("without --to: exit %d, want 2", rc)
	}
}
