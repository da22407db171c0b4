package accountoperator

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestValidate(t *testing.T) {
	o := NewOptions()
	if err := o.Validate(); err != nil {
		t.Fatalf("defaults invalid: %v", err)
	}
	o.Workspace, o.Workers, o.EndpointSlice, o.SoftMemoryLimit, o.InitializerType = "root/x", 0, "", "lots", "root:x"
	err := o.Validate()
	for _, want := range []string{"--workspace", "--workers", "--kcp-api-export-endpoint-slice-name", "--soft-memory-limit", "--initializer-workspace-type"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v does not mention %s", err, want)
		}
	}
}

func TestCompletePointsAtProviderWorkspace(t *testing.T) {
	kc := filepath.Join(t.TempDir(), "kc")
	if err := os.WriteFile(kc, []byte(`apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "https://127.0.0.1:6443/clusters/root", insecure-skip-tls-verify: true}
users:
- name: u
  user: {token: t}
contexts:
- name: base
  context: {cluster: c, user: u}
current-context: base
`), 0o600); err != nil {
		t.Fatal(err)
	}
	o := NewOptions()
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	o.AddFlags(fs)
	if err := fs.Parse([]string{"--kubeconfig", kc, "--workspace", "root:my-provider"}); err != nil {
		t.Fatal(err)
	}
	c, err := o.Complete()
	if err != nil {
		t.Fatal(err)
	}
	if c.Provider.Host != "https://127.0.0.1:6443/clusters/root:my-provider" || c.Base.Host != "https://127.0.0.1:6443" {
		t.Errorf("provider %q base %q", c.Provider.Host, c.Base.Host)
	}
}
