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

func TestShardAndEtcdFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string // parts of the errors, one each; none: valid
	}{
		{[]string{"--shard-name", "b"}, []string{"--root-shard-kubeconfig"}},
		{[]string{"--root-shard-kubeconfig", "options_test.go"}, []string{"for shards other than root"}},
		{[]string{"--shard-name", "b", "--root-shard-kubeconfig", "options_test.go", "--shard-external-url", "https://proxy:443"}, nil},
		{[]string{"--shard-name", "", "--shard-base-url", "http://plain"}, []string{"--shard-name must not be empty", "--shard-base-url"}},
		{[]string{"--etcd-cafile", "options_test.go"}, []string{"are for --etcd-servers"}},
		{[]string{"--etcd-servers", "https://127.0.0.1:2379", "--etcd-certfile", "options_test.go"}, []string{"go together"}},
		{[]string{"--etcd-servers", "https://127.0.0.1:2379", "--etcd-cafile", "options_test.go", "--etcd-certfile", "options_test.go", "--etcd-keyfile", "options_test.go"}, nil},
		{[]string{"--requestheader-client-ca-file", "/does/not/exist"}, []string{"--requestheader-client-ca-file"}},
		{[]string{"--replica-source", "cache"}, nil},
		{[]string{"--replica-source", "peers"}, []string{"--replica-source"}},
		{[]string{"--cache-server-kubeconfig", "options_test.go"}, []string{"goes with --replica-source=cache"}},
		{[]string{"--replica-source", "cache", "--cache-server-kubeconfig", "/does/not/exist"}, []string{"--cache-server-kubeconfig"}},
	} {
		o := New()
		fs := pflag.NewFlagSet("start", pflag.ContinueOnError)
		o.AddFlags(fs)
		if err := fs.Parse(tc.args); err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		errs := o.Validate()
		if len(errs) != len(tc.want) {
			t.Errorf("%v: errors %v, want %d", tc.args, errs, len(tc.want))
			continue
		}
		for i, want := range tc.want {
			if !strings.Contains(errs[i].Error(), want) {
				t.Errorf("%v: error %q does not mention %q", tc.args, errs[i], want)
			}
		}
	}
	o := New()
	o.SecurePort = 7000
	c, err := o.Complete()
	if err != nil {
		t.Fatal(err)
	}
	if c.ShardBaseURL != "https://127.0.0.1:7000" || c.ShardExternalURL != c.ShardBaseURL {
		t.Errorf("shard URLs default to %q and %q", c.ShardBaseURL, c.ShardExternalURL)
	}
}

func TestValidateMaxTokenExpiration(t *testing.T) {
	for _, tt := range []struct {
		value string
		ok    bool
	}{{"0s", true}, {"1h", true}, {"24h", true}, {"59m", false}, {"1193046h", true}, {"1193047h", false}} {
		o := New()
		fs := pflag.NewFlagSet("start", pflag.ContinueOnError)
		o.AddFlags(fs)
		if err := fs.Parse([]string{"--service-account-max-token-expiration=" + tt.value}); err != nil {
			t.Fatal(err)
		}
		errs := o.Validate()
		if tt.ok != (len(errs) == 0) {
			t.Errorf("--service-account-max-token-expiration=%s: errors %v, want ok=%v", tt.value, errs, tt.ok)
		}
	}
}

// TestValidateOrganizationsPath: the "My organizations" path is a URL
// path on the authorization webhook's server, so it needs that webhook.
func TestValidateOrganizationsPath(t *testing.T) {
	for _, tc := range []struct {
		path, config string
		ok           bool
	}{
		{"", "", true},
		{"/organizations", "", false},
		{"organizations", "/dev/null", false},
		{"/organizations", "/dev/null", true},
	} {
		o := New()
		o.AuthorizationWebhookOrganizationsPath, o.AuthorizationWebhookConfigFile = tc.path, tc.config
		found := false
		for _, e := range o.Validate() {
			found = found || strings.Contains(e.Error(), "--authorization-webhook-organizations-path")
		}
		if found == tc.ok {
			t.Errorf("path %q with config %q: refused %v, want %v", tc.path, tc.config, found, !tc.ok)
		}
	}
}
