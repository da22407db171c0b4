package sharing

import (
	"strings"
	"testing"
	"time"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// testCacheServer: the cache server the root shard embeds serves shards
// only. A tenant's token (bob, admin of his own workspace) is refused
// writing a replica the shards trust and reading them, on the root shard
// straight, through a workspace path, and through the front proxy; the
// shard admin reads the replicas (b's copies among them).
func testCacheServer(t *testing.T, sh *framework.Shards) {
	if !fromCache() {
		t.Skip("the shards replicate each other (--replica-source=shards)")
	}
	ws := framework.CreatePinnedWorkspace(t, sh.Via, "root", framework.UniqueName("cachesrv"), "b")
	sh.Via.KubectlFor(ws.Path).Run(t, "create", "clusterrolebinding", "bob-admin", "--clusterrole=cluster-admin", "--user=bob")
	bob := sh.Root.UserToken(t, "bob")
	export := `{"apiVersion":"apis.kcp.io/v1alpha2","kind":"APIExport","metadata":{"name":"forged"}}`
	write := "/services/cache/shards/b/clusters/" + ws.Cluster + "/apis/apis.kcp.io/v1alpha2/apiexports/forged"
	list := "/services/cache/shards/*/clusters/*/apis/core.kcp.io/v1alpha1/logicalclusters"
	for _, tc := range []struct {
		what, method, url, body string
		via                     *framework.Server
	}{
		{"bob writing a replica on the root shard", "PUT", sh.Root.BaseURL + write, export, sh.Root},
		{"bob listing the replicas on the root shard", "GET", sh.Root.BaseURL + list, "", sh.Root},
		{"bob writing a replica through his workspace's path", "PUT", sh.Root.BaseURL + "/clusters/" + ws.Cluster + write, export, sh.Root},
		{"bob writing a replica through the front proxy", "PUT", sh.Proxy.URL + write, export, sh.Via},
		{"bob writing a replica through the front proxy and his workspace's path", "PUT", sh.Proxy.URL + "/clusters/" + ws.Path + write, export, sh.Via},
	} {
		r := tc.via.RequestURL(t, bob, tc.method, tc.url, "application/json", []byte(tc.body))
		if r.Code < 400 || r.Code >= 500 {
			t.Errorf("%s: %d, want a refusal: %s", tc.what, r.Code, r.String())
		}
	}
	r := sh.Root.RequestURL(t, sh.Root.AdminToken(t), "GET", sh.Root.BaseURL+"/services/cache/shards/b/clusters/"+ws.Cluster+"/apis/apis.kcp.io/v1alpha2/apiexports/forged", "", nil)
	framework.RequireCode(t, r, "the forged export in the cache server", 404)
	lc := "/services/cache/shards/b/clusters/" + ws.Cluster + "/apis/core.kcp.io/v1alpha1/logicalclusters/cluster"
	framework.Eventually(t, 30*time.Second, 250*time.Millisecond, "the shard admin to read b's copy of the workspace's logical cluster", func() (bool, string) {
		r := sh.Root.RequestURL(t, sh.Root.AdminToken(t), "GET", sh.Root.BaseURL+lc, "", nil)
		return r.Code == 200 && strings.Contains(r.String(), `"kcp.io/path":"`+ws.Path+`"`), r.String()
	})
	r = sh.Root.RequestURL(t, sh.Root.AdminToken(t), "GET", sh.Root.BaseURL+list, "", nil)
	framework.RequireCode(t, r, "the shard admin listing the replicated logical clusters", 200)
}
