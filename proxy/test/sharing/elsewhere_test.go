package sharing

import (
	"time"

	"testing"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// testElsewhere: a shard asked directly for a logical cluster another
// shard holds refuses it (403), discovery included, as kcp's shards do:
// only the front proxy knows where a workspace is. alice, admin of a
// workspace on each shard, reads both through the proxy, and neither on
// the other shard; root is closed on shard b too. system:masters is let
// through everywhere, as in kcp. A cluster no shard holds is closed on
// every shard.
func testElsewhere(t *testing.T, sh *framework.Shards) {
	ps := sh.Via
	org := framework.CreatePinnedWorkspace(t, ps, "root", framework.UniqueName("elsewhere"), "root")
	onRoot := framework.CreatePinnedWorkspace(t, ps, org.Path, "on-root", "root")
	onB := framework.CreatePinnedWorkspace(t, ps, org.Path, "on-b", "b")
	alice := sh.Root.UserToken(t, "alice")
	for _, ws := range []framework.Workspace{onRoot, onB} {
		ps.KubectlFor(ws.Path).Run(t, "create", "clusterrolebinding", "alice-admin", "--clusterrole=cluster-admin", "--user=alice")
		framework.Eventually(t, 30*time.Second, 250*time.Millisecond, "alice to discover "+ws.Path+" through the proxy", func() (bool, string) {
			r := ps.RequestURL(t, alice, "GET", ps.ClusterURL(ws.Path)+"/api", "", nil)
			return r.Code == 200, r.String()
		})
	}
	for _, c := range []struct {
		shard   *framework.Server
		cluster string
	}{{sh.B, onRoot.Cluster}, {sh.B, "root"}, {sh.Root, onB.Cluster}} {
		for _, path := range []string{"/api", "/apis", "/version", "/api/v1/namespaces/default/configmaps"} {
			url := c.shard.ClusterURL(c.cluster) + path
			framework.RequireCode(t, c.shard.RequestURL(t, alice, "GET", url, "", nil), "alice asking a shard for "+url+" (held by the other shard)", 403)
			framework.RequireCode(t, c.shard.RequestURL(t, c.shard.AdminToken(t), "GET", url, "", nil), "system:masters asking a shard for "+url, 200)
		}
	}
	// A logical cluster no shard holds: closed on every shard, discovery
	// included, as kcp's "LogicalCluster not found" (its RBAC would let
	// every authenticated user discover it); system:masters passes.
	for _, s := range []*framework.Server{sh.Root, sh.B} {
		for _, path := range []string{"/api", "/apis", "/version"} {
			url := s.ClusterURL("nosuchcluster0") + path
			framework.RequireCode(t, s.RequestURL(t, alice, "GET", url, "", nil), "alice asking a shard for "+url+" (no shard holds it)", 403)
			framework.RequireCode(t, s.RequestURL(t, s.AdminToken(t), "GET", url, "", nil), "system:masters asking a shard for "+url, 200)
		}
	}
	// The bare /metrics is the shard's own, authorized in root on every
	// shard: kcp-admin (cluster-admin in root, not system:masters) scrapes
	// shard b too.
	for _, s := range []*framework.Server{sh.Root, sh.B} {
		cfg, err := s.Config("base", "")
		if err != nil {
			t.Fatal(err)
		}
		framework.RequireCode(t, s.RequestURL(t, cfg.BearerToken, "GET", s.BaseURL+"/metrics", "", nil), "kcp-admin scraping "+s.BaseURL+"/metrics", 200)
	}
	// Each shard still answers alice for its own workspaces.
	framework.RequireCode(t, sh.B.RequestURL(t, alice, "GET", sh.B.ClusterURL(onB.Cluster)+"/api", "", nil), "alice discovering "+onB.Path+" on shard b", 200)
	framework.RequireCode(t, sh.Root.RequestURL(t, alice, "GET", sh.Root.ClusterURL(onRoot.Cluster)+"/api", "", nil), "alice discovering "+onRoot.Path+" on root", 200)
}
