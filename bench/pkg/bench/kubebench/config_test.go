package kubebench

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const kubeconfigTmpl = `apiVersion: v1
kind: Config
clusters:
- name: root
  cluster:
    server: https://127.0.0.1:6443/clusters/root
    insecure-skip-tls-verify: true
- name: base
  cluster:
    server: https://127.0.0.1:6443
    insecure-skip-tls-verify: true
contexts:
- name: root
  context: {cluster: root, user: kcp-admin}
%s
current-context: root
users:
- name: kcp-admin
  user: {token: secret-token}
`

func writeKubeconfig(t *testing.T, withBase bool) string {
	t.Helper()
	extra := ""
	if withBase {
		extra = "- name: base\n  context: {cluster: base, user: kcp-admin}"
	}
	p := filepath.Join(t.TempDir(), "admin.kubeconfig")
	if err := os.WriteFile(p, []byte(strings.Replace(kubeconfigTmpl, "%s", extra, 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadTarget(t *testing.T) {
	for _, c := range []struct {
		name, ctx, wantCtx string
		withBase           bool
	}{
		{"prefers base", "", "base", true},
		{"falls back to current", "", "root", false},
		{"explicit root is stripped", "root", "root", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			tg, err := LoadTarget(writeKubeconfig(t, c.withBase), c.ctx, 7*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			if tg.Context != c.wantCtx || tg.Base != "https://127.0.0.1:6443" || tg.Config.Host != tg.Base {
				t.Fatalf("got context %q base %q host %q", tg.Context, tg.Base, tg.Config.Host)
			}
			cfg := tg.Config
			if cfg.QPS >= 0 || cfg.ContentType != "application/json" || cfg.Timeout != 7*time.Second || cfg.BearerToken != "secret-token" {
				t.Fatalf("config not tuned: %+v", cfg)
			}
			if tg.HTTP == nil {
				t.Fatal("no HTTP client")
			}
		})
	}
	if _, err := LoadTarget(writeKubeconfig(t, true), "nope", time.Second); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Fatalf("want not-found error, got %v", err)
	}
	if _, err := LoadTarget(filepath.Join(t.TempDir(), "missing"), "", time.Second); err == nil {
		t.Fatal("want error for missing file")
	}
}

func TestNewSuiteClusterURL(t *testing.T) {
	tg, err := LoadTarget(writeKubeconfig(t, true), "", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewSuite(tg, Options{Cluster: "Bad_Name", Namespace: "x"}); err == nil {
		t.Fatal("want invalid cluster error")
	}
	s, err := NewSuite(tg, Options{Cluster: "root:org", Namespace: "bench-x"})
	if err != nil {
		t.Fatal(err)
	}
	c, err := s.coreFor("bench-lc-1")
	if err != nil {
		t.Fatal(err)
	}
	u := c.RESTClient().Get().Namespace("bench").Resource("configmaps").Name("bench").URL()
	u.RawQuery = "" // client-go adds ?timeout=<request timeout>
	if u.String() != "https://127.0.0.1:6443/clusters/bench-lc-1/api/v1/namespaces/bench/configmaps/bench" {
		t.Fatalf("URL %s", u)
	}
}

func TestConfigMapJSONSize(t *testing.T) {
	if n := ConfigMapJSONSize(); n < 280 || n > 320 {
		t.Fatalf("configmap JSON size %d, want about 300", n)
	}
}
