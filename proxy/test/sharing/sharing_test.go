// Package sharing tests what shards share with each other, on one
// sharded install (a root shard and shard b behind a front proxy) that
// its tests share: an APIBinding on shard b to an APIExport on the root
// shard (by a user with only bind on the export there, as on one shard),
// the export's maximal permission policy bounding consumers on b, each
// shard's URL in the export's endpoint slice, a
// multicluster-runtime controller (kcp's multicluster-provider) that
// follows every URL of the slice, the lifecycle virtual workspaces
// (initializing, terminating) of a WorkspaceType on every shard, and a
// restarted proxy that routes every workspace again.
package sharing

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

func TestMain(m *testing.M) {
	code := m.Run()
	framework.CleanupBinaries()
	os.Exit(code)
}

var widgetsCRD = framework.SchemalessCRD("example.com", "widgets", "Widget")

// asUser is kubectl through the front proxy as a token user in a
// workspace.
func asUser(t *testing.T, sh *framework.Shards, user, path string) *framework.Kubectl {
	return &framework.Kubectl{Kubeconfig: sh.Via.Kubeconfig,
		GlobalArgs: []string{"--context", "shard-base", "--server", sh.Via.ClusterURL(path), "--token", sh.Root.UserToken(t, user)}}
}

// caBundle writes a CA file trusting the proxy and the shards (endpoint
// slice URLs are the shards' own).
func caBundle(t *testing.T, sh *framework.Shards) string {
	t.Helper()
	var all []byte
	for _, f := range []string{sh.Proxy.PKI.ServingCA.CertFile, filepath.Join(sh.Root.RootDir, "ca.crt")} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, b...)
	}
	out := filepath.Join(t.TempDir(), "ca-bundle.crt")
	if err := os.WriteFile(out, all, 0o600); err != nil {
		t.Fatal(err)
	}
	return out
}

// vwURL is the spec.virtualWorkspaceURL of a Shard.
func vwURL(t *testing.T, sh *framework.Shards, shard string) string {
	t.Helper()
	return strings.TrimSpace(sh.Root.KubectlFor("root").Run(t, "get", "shard", shard, "-o", "jsonpath={.spec.virtualWorkspaceURL}"))
}

// TestAcrossShards runs the package's tests on one sharded install.
func TestAcrossShards(t *testing.T) {
	sh := framework.StartShards(t)
	t.Run("APIBinding", func(t *testing.T) { testAPIBinding(t, sh) })
	t.Run("BindOnly", func(t *testing.T) { testBindOnly(t, sh) })
	t.Run("MaximalPermissionPolicy", func(t *testing.T) { testPolicy(t, sh) })
	t.Run("LifecycleVirtualWorkspaces", func(t *testing.T) { testLifecycle(t, sh) })
	t.Run("Terminators", func(t *testing.T) { testTerminators(t, sh) })
	t.Run("UseType", func(t *testing.T) { testUseType(t, sh) })
	t.Run("TypeIssuer", func(t *testing.T) { testTypeIssuer(t, sh) })
	t.Run("Elsewhere", func(t *testing.T) { testElsewhere(t, sh) })
	t.Run("Capacity", func(t *testing.T) { testCapacity(t, sh) })
	t.Run("ShardSelectorReserved", func(t *testing.T) { testShardSelectorReserved(t, sh) })
	t.Run("ReplicaCost", func(t *testing.T) { testReplicaCost(t, sh) })
	t.Run("Revocation", func(t *testing.T) { testRevocation(t, sh) })
	t.Run("CacheServer", func(t *testing.T) { testCacheServer(t, sh) })
	t.Run("ProxyRestart", func(t *testing.T) { testProxyRestart(t, sh) })
}
