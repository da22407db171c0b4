package kubectl

import (
	"strings"
	"testing"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// TestAdminKubeconfig checks the kubeconfig the server writes and that plain
// `kubectl --kubeconfig admin.kubeconfig ...` works against root.
func TestAdminKubeconfig(t *testing.T) {
	s := server(t)
	cfg := s.KubeconfigData(t)

	framework.RequireEqual(t, cfg.CurrentContext, "root", "current context of admin.kubeconfig")
	for _, name := range []string{"root", "base", "system:admin", "shard-base"} {
		if _, ok := cfg.Contexts[name]; !ok {
			t.Fatalf("admin.kubeconfig has no context %q (contexts: %v)", name, keys(cfg.Contexts))
		}
	}
	server := func(ctx string) string {
		c := cfg.Clusters[cfg.Contexts[ctx].Cluster]
		if c == nil {
			t.Fatalf("context %s refers to a missing cluster entry", ctx)
		}
		return strings.TrimSuffix(c.Server, "/")
	}
	framework.RequireEqual(t, server("root"), s.BaseURL+"/clusters/root", "server of context root")
	framework.RequireEqual(t, server("base"), s.BaseURL, "server of context base")
	for _, user := range []string{"kcp-admin", "shard-admin"} {
		ai, ok := cfg.AuthInfos[user]
		if !ok {
			t.Fatalf("admin.kubeconfig has no user %q (users: %v)", user, keys(cfg.AuthInfos))
		}
		if ai.Token == "" {
			t.Fatalf("user %q in admin.kubeconfig has no bearer token", user)
		}
	}
	framework.RequireEqual(t, cfg.Contexts["shard-base"].AuthInfo, "shard-admin", "user of context shard-base")

	framework.RequireEqual(t, strings.TrimSpace(s.Kubectl(t, "config", "current-context")), "root", "kubectl config current-context")
	framework.RequireEqual(t, strings.TrimSpace(s.Kubectl(t, "--context", "base", "get", "--raw", "/readyz")), "ok", "kubectl get --raw /readyz")

	// The default context works for everyday commands in root.
	s.Kubectl(t, "get", "namespaces")
	s.Kubectl(t, "get", "configmaps", "-A")
	framework.RequireEqual(t, strings.TrimSpace(s.Kubectl(t, "auth", "can-i", "create", "configmaps", "-n", "default")), "yes", "kcp-admin can create configmaps in root")
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
