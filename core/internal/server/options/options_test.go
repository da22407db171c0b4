package options

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

func TestValidate(t *testing.T) {
	o := New()
	if errs := o.Validate(); len(errs) != 0 {
		t.Fatalf("defaults must be valid, got %v", errs)
	}
	o.BindAddress = "not-an-ip"
	o.SecurePort = 70000
	o.TokenAuthFile = "/does/not/exist"
	o.AuthenticationConfig = "/does/not/exist.yaml"
	o.AuthorizationWebhookConfigFile = "/does/not/exist/either"
	o.AuthorizationWebhookVersion = "v2"
	o.AuthorizationWebhookCacheUnauthorizedTTL = -1
	errs := o.Validate()
	if len(errs) != 7 {
		t.Fatalf("want 7 errors, got %v", errs)
	}
	for _, want := range []string{"--bind-address", "--secure-port", "--token-auth-file", "--authentication-config", "--authorization-webhook-config-file",
		"--authorization-webhook-version", "--authorization-webhook-cache-unauthorized-ttl"} {
		found := false
		for _, e := range errs {
			found = found || strings.Contains(e.Error(), want)
		}
		if !found {
			t.Errorf("no error mentions %s: %v", want, errs)
		}
	}
}

func TestCompleteExternalAddress(t *testing.T) {
	o := New()
	o.SecurePort = 7000
	c, err := o.Complete()
	if err != nil {
		t.Fatal(err)
	}
	if c.ExternalAddress != "127.0.0.1:7000" {
		t.Errorf("ExternalAddress = %q", c.ExternalAddress)
	}
	o.ExternalHostname = "example.com"
	c, _ = o.Complete()
	if c.ExternalAddress != "example.com:7000" {
		t.Errorf("ExternalAddress = %q", c.ExternalAddress)
	}
}

func TestKCPHarnessFlags(t *testing.T) {
	o := New()
	fs := pflag.NewFlagSet("start", pflag.ContinueOnError)
	o.AddFlags(fs)
	err := fs.Parse([]string{"--root-directory", "/tmp/x", "--kubeconfig-path=/tmp/k/admin.kubeconfig",
		"--embedded-etcd-wal-size-bytes=5000", "--feature-gates=WorkspaceMounts=true,Foo=false", "--audit-log-path", "/tmp/a"})
	if err != nil {
		t.Fatalf("kcp's test harness flags must parse: %v", err)
	}
	if errs := o.Validate(); len(errs) != 0 {
		t.Fatalf("Validate: %v", errs)
	}
	if !o.FeatureGates["WorkspaceMounts"] || o.FeatureGates["Foo"] || o.EmbeddedEtcdWALSizeBytes != 5000 {
		t.Errorf("parsed %+v", o)
	}
	c, err := o.Complete()
	if err != nil || c.KubeconfigPath != "/tmp/k/admin.kubeconfig" {
		t.Errorf("KubeconfigPath = %q, %v", c.KubeconfigPath, err)
	}
	o.EmbeddedEtcdWALSizeBytes = -1
	if len(o.Validate()) != 1 {
		t.Errorf("a negative WAL size must be refused")
	}
}
