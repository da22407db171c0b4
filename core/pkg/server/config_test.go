package server

import (
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/meshplane/meshplane/core/pkg/server/options"
)

// The config stages touch files only: no etcd, no kubeconfig before Run.
func TestConfigStagesStartNothing(t *testing.T) {
	o := options.New()
	o.RootDirectory = t.TempDir()
	o.SecurePort = freePort(t)
	if errs := o.Validate(); len(errs) > 0 {
		t.Fatalf("Validate: %v", errs)
	}
	completed, err := o.Complete()
	if err != nil {
		t.Fatalf("Complete: %v", err)
	}
	config, err := NewConfig(completed)
	if err != nil {
		t.Fatalf("NewConfig: %v", err)
	}
	if config.Generic.SecureServing == nil {
		t.Fatal("NewConfig configured no secure serving")
	}
	t.Cleanup(func() { _ = config.Generic.SecureServing.Listener.Close() })
	if got := os.Getenv("KUBE_FEATURE_WatchListClient"); got != "false" {
		t.Errorf("KUBE_FEATURE_WatchListClient = %q after NewConfig, want false", got)
	}
	if config.Generic.Authentication.Authenticator == nil || config.TokenAuthenticator == nil {
		t.Error("NewConfig built no authenticator")
	}
	s, err := config.Complete().New()
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if want := "https://" + completed.ExternalAddress; s.config.ExternalURL != want {
		t.Errorf("external URL = %q, want %q", s.config.ExternalURL, want)
	}
	if s.store != nil {
		t.Error("New started storage; only Run may")
	}
	entries, err := os.ReadDir(o.RootDirectory)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() {
			t.Errorf("the config stages made directory %s (etcd data?) in the root directory", e.Name())
		}
	}
	if _, err := os.Stat(filepath.Join(o.RootDirectory, "admin.kubeconfig")); !os.IsNotExist(err) {
		t.Errorf("admin.kubeconfig exists before Run (stat: %v)", err)
	}
}

func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
