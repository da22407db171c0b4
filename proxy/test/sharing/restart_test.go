package sharing

import (
	"fmt"
	"strings"
	"testing"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// testProxyRestart: the proxy holds no state; started again, it routes
// every workspace that existed before (several per shard: its index keys
// LogicalClusters, all named "cluster", by cluster too).
func testProxyRestart(t *testing.T, sh *framework.Shards) {
	ps := sh.Via
	org := framework.CreatePinnedWorkspace(t, ps, "root", framework.UniqueName("restart"), "b")
	var paths []string
	for _, shard := range []string{"root", "b"} {
		for i := range 3 {
			paths = append(paths, framework.CreatePinnedWorkspace(t, ps, org.Path, fmt.Sprintf("%s-%d", shard, i), shard).Path)
		}
	}
	sh.Proxy.Restart(t)
	for _, p := range append(paths, org.Path, "root") {
		out := ps.KubectlFor(p).Run(t, "get", "namespace", "default", "-o", "name")
		framework.RequireEqual(t, strings.TrimSpace(out), "namespace/default", "namespace default of "+p+" through the restarted proxy")
	}
}
