package fgacheck_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/meshplane/meshplane/operators/fgaclient"
	"github.com/meshplane/meshplane/sdk/keyfile"
	"github.com/meshplane/meshplane/sdk/testing/openfga"
	"github.com/meshplane/meshplane/webhook/internal/fgacheck"
)

// TestPresharedKey: against an OpenFGA that requires its preshared key,
// the webhook's client reads a store's models only with the key.
func TestPresharedKey(t *testing.T) {
	const key = "0a1b2c3d4e5f60718293a4b5c6d7e8f9"
	srv := openfga.Start(t, openfga.Options{PresharedKey: key})
	ctx := context.Background()
	admin, err := fgaclient.New(srv.URL, fgaclient.WithPresharedKey(key))
	if err != nil {
		t.Fatal(err)
	}
	store, err := admin.CreateStore(ctx, "webhook")
	if err != nil {
		t.Fatal(err)
	}
	without, err := fgacheck.New(srv.URL, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := without.LatestModel(ctx, store); err == nil {
		t.Error("read the models without the key")
	}
	with, err := fgacheck.New(srv.URL, 2*time.Second, fgacheck.WithPresharedKey(key))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := with.LatestModel(ctx, store); err != nil {
		t.Errorf("with the key: %v", err)
	}

	file := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(file, []byte(key+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := keyfile.Read(file); err == nil {
		t.Error("a key file readable by others was accepted")
	}
	if err := os.Chmod(file, 0o600); err != nil {
		t.Fatal(err)
	}
	if got, err := keyfile.Read(file); err != nil || got != key {
		t.Errorf("keyfile.Read = %q, %v", got, err)
	}
}
