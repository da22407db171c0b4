package sharing

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// replicaObjects matches the replicated LogicalClusters on /metrics.
var replicaObjects = regexp.MustCompile(`(?m)^meshplane_shard_replica_objects\{resource="logicalclusters"\} (\d+)$`)

// testReplicaCost: each shard reports on /metrics what replicating the
// other shards costs it: 12 watches for the one other shard (14 with the
// cache server: one per kind, RBAC included, whatever the number of
// shards), and the LogicalClusters it holds of it (at least the other
// shard's workspaces this test made).
func testReplicaCost(t *testing.T, sh *framework.Shards) {
	watches := "\nmeshplane_shard_replica_watches 12\n"
	if fromCache() {
		watches = "\nmeshplane_shard_replica_watches 14\n"
	}
	ps := sh.Via
	org := framework.CreatePinnedWorkspace(t, ps, "root", framework.UniqueName("cost"), "root")
	framework.CreatePinnedWorkspace(t, ps, org.Path, "on-b", "b")
	for _, s := range []*framework.Server{sh.Root, sh.B} {
		framework.Eventually(t, 30*time.Second, 250*time.Millisecond, "the replica cost on the /metrics of "+s.BaseURL, func() (bool, string) {
			r := s.RequestURL(t, s.AdminToken(t), "GET", s.BaseURL+"/metrics", "", nil)
			body := string(r.Body)
			m := replicaObjects.FindStringSubmatch(body)
			if r.Code != 200 || m == nil || !strings.Contains(body, watches) {
				return false, r.String()
			}
			n, _ := strconv.Atoi(m[1])
			return n >= 1, "replicated logicalclusters: " + m[1]
		})
	}
}

// fromCache reports whether the shards read each other from the cache
// server (framework.StartShards' default, unless MESHPLANE_E2E_ARGS has
// --replica-source=shards).
func fromCache() bool {
	return !strings.Contains(os.Getenv("MESHPLANE_E2E_ARGS"), "--replica-source=shards")
}
