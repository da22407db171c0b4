package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

var widgetsCRD = framework.SchemalessCRD("example.com", "widgets", "Widget")

// TestShards runs a root shard and shard b, each with its own embedded
// etcd, behind one front proxy: workspaces land on the shard their
// location selector names, a tree spans both shards, and kubectl ws moves
// through it.
func TestShards(t *testing.T) {
	sh := framework.StartShards(t)
	root, b, fp, ps := sh.Root, sh.B, sh.Proxy, sh.Via
	p := fp.PKI
	inRootShard := root.KubectlFor("root")
	framework.RequireContains(t, inRootShard.Run(t, "get", "shards", "-o", `jsonpath={range .items[*]}{.metadata.name}={.spec.baseURL},{.spec.externalURL} {end}`),
		"b="+b.BaseURL+","+p.URL, "shard b's URLs in root")

	viaProxy := ps.KubectlFor("root")
	org := framework.UniqueName("onb")
	viaProxy.RunStdin(t, framework.PinnedWorkspace(org, "b", ""), "apply", "-f", "-")
	orgCluster, shard := framework.WaitWorkspaceReady(t, viaProxy, org)
	framework.RequireEqual(t, shard, "b", "shard of "+org)
	// Its LogicalCluster is on shard b, not on root.
	framework.RequireEqual(t, b.KubectlFor(orgCluster).Run(t, "get", "logicalcluster", "cluster", "-o", `jsonpath={.metadata.annotations.kcp\.io/path}`),
		"root:"+org, "path of "+org+"'s LogicalCluster on shard b")
	if _, _, err := root.KubectlFor(orgCluster).RunErr(t, "get", "logicalcluster", "cluster"); err == nil {
		t.Fatalf("the root shard holds the LogicalCluster of %s too", org)
	}
	framework.RequireContains(t, viaProxy.Run(t, "get", "workspace", org, "-o", "jsonpath={.spec.URL}"), p.URL+"/clusters/root:"+org,
		"spec.URL of a workspace on shard b (the front proxy's)")

	// A token user through the proxy on shard b: b authenticates her (the
	// shards share the token file) and its RBAC decides.
	aliceToken := map[string]string{"Authorization": "Bearer " + root.UserToken(t, "alice")}
	code, body := get(t, client(t, fp, nil), p.URL+"/clusters/root:"+org+"/api/v1/namespaces/default/configmaps", aliceToken)
	framework.RequireEqual(t, code, 403, "alice listing configmaps on shard b before a grant: "+body)
	framework.RequireContains(t, body, `User \"alice\"`, "the refusal names alice (shard b authenticated her token)")
	ps.KubectlFor("root:"+org).Run(t, "create", "clusterrolebinding", "alice-admin", "--clusterrole=cluster-admin", "--user=alice")
	framework.Eventually(t, 30*time.Second, 200*time.Millisecond, "alice to list configmaps on shard b through the proxy", func() (bool, string) {
		code, body := get(t, client(t, fp, nil), p.URL+"/clusters/root:"+org+"/api/v1/namespaces/default/configmaps", aliceToken)
		return code == 200, body
	})
	code, user, _ := whoami(t, client(t, fp, nil), p.URL, "root:"+org, aliceToken)
	framework.RequireEqual(t, fmt.Sprint(code, " ", user), "201 alice", "alice's SelfSubjectReview in "+org+" on shard b through the proxy")

	// A child on the root shard of the workspace on b, created through the
	// proxy (b schedules it and writes its LogicalCluster on root).
	inOrg := ps.KubectlFor("root:" + org)
	inOrg.RunStdin(t, framework.PinnedWorkspace("child", "root", ""), "apply", "-f", "-")
	childCluster, shard := framework.WaitWorkspaceReady(t, inOrg, "child")
	framework.RequireEqual(t, shard, "root", "shard of root:"+org+":child")
	framework.RequireEqual(t, root.KubectlFor(childCluster).Run(t, "get", "logicalcluster", "cluster", "-o", `jsonpath={.metadata.annotations.kcp\.io/path}`),
		"root:"+org+":child", "path of the child's LogicalCluster on the root shard")

	// kubectl ws walks the tree across shards through the proxy.
	k := ps.WorkspaceKubectl(t, "root")
	k.WS(t, "use", "root:"+org+":child")
	k.Run(t, "create", "configmap", "on-root", "-n", "default")
	framework.RequireEqual(t, strings.TrimSpace(root.KubectlFor(childCluster).Run(t, "get", "configmap", "on-root", "-n", "default", "-o", "name")),
		"configmap/on-root", "configmap written through the proxy in the child, read on the root shard")
	k.WS(t, "..")
	framework.RequireEqual(t, k.CurrentWorkspace(t), "root:"+org, "kubectl ws .. from the child")
	k.Run(t, "create", "configmap", "on-b", "-n", "default")
	framework.RequireEqual(t, strings.TrimSpace(b.KubectlFor(orgCluster).Run(t, "get", "configmap", "on-b", "-n", "default", "-o", "name")),
		"configmap/on-b", "configmap written through the proxy in "+org+", read on shard b")
	framework.RequireContains(t, k.WS(t, "tree"), "child", "kubectl ws tree across shards")

	// A workspace type defined on shard b, used for a workspace on the
	// root shard: found by walking the tree from root.
	inOrg.RunStdin(t, "apiVersion: tenancy.kcp.io/v1alpha1\nkind: WorkspaceType\nmetadata:\n  name: custom\nspec: {}\n", "apply", "-f", "-")
	inChild := ps.KubectlFor("root:" + org + ":child")
	inChild.RunStdin(t, fmt.Sprintf("apiVersion: tenancy.kcp.io/v1alpha1\nkind: Workspace\nmetadata:\n  name: grand\nspec:\n  location:\n    selector:\n      matchLabels:\n        shard: root\n  type:\n    name: custom\n    path: root:%s\n", org), "apply", "-f", "-")
	_, shard = framework.WaitWorkspaceReady(t, inChild, "grand")
	framework.RequireEqual(t, shard, "root", "shard of a workspace of a type from shard b, made on the root shard")
	framework.RequireEqual(t, inChild.Run(t, "get", "workspace", "grand", "-o", "jsonpath={.spec.type.path}:{.spec.type.name}"), "root:"+org+":custom",
		"type of the workspace")

	// Deleting the child (on root) from its parent's shard (b) removes its
	// LogicalCluster on root, then the Workspace.
	inOrg.Run(t, "delete", "workspace", "child", "--wait=false")
	framework.Eventually(t, time.Minute, 200*time.Millisecond, "the child and its LogicalCluster on root to go", func() (bool, string) {
		_, lcErr, lcGone := root.KubectlFor(childCluster).RunErr(t, "get", "logicalcluster", "cluster")
		_, wsErr, wsGone := inOrg.RunErr(t, "get", "workspace", "child")
		return lcGone != nil && strings.Contains(lcErr, "NotFound") && wsGone != nil && strings.Contains(wsErr, "NotFound"), lcErr + wsErr
	})

	// An APIExport on shard b, bound in a workspace on b; its virtual
	// workspace (/services/apiexport/<cluster>/...) is routed to b.
	inOrg.RunStdin(t, framework.PinnedWorkspace("provider", "b", ""), "apply", "-f", "-")
	providerCluster, shard := framework.WaitWorkspaceReady(t, inOrg, "provider")
	framework.RequireEqual(t, shard, "b", "shard of the provider")
	provider := framework.Workspace{Name: "provider", Path: "root:" + org + ":provider", Cluster: providerCluster}
	ps.ExportCRD(t, provider, widgetsCRD, "example.com")
	ps.Bind(t, provider, "widgets", provider, "example.com", nil)
	ps.KubectlFor(provider.Path).RunStdin(t, "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w1\n  namespace: default\n", "apply", "-f", "-")
	slice := ps.EndpointSliceURL(t, provider, "example.com")
	through := p.URL + slice[strings.Index(slice, "/services/"):]
	r := ps.RequestURL(t, root.AdminToken(t), "GET", through+"/clusters/*/apis/example.com/v1/widgets", "", nil)
	framework.RequireCode(t, r, "listing widgets in the APIExport virtual workspace of shard b through the proxy", 200)
	framework.RequireContains(t, r.String(), `"w1"`, "widgets in the virtual workspace through the proxy")

	// An unschedulable shard takes no new workspace until it is
	// schedulable again.
	inRootShard.Run(t, "annotate", "shard", "b", "experimental.core.kcp.io/unschedulable=true")
	viaProxy.RunStdin(t, framework.PinnedWorkspace(org+"-later", "b", ""), "apply", "-f", "-")
	framework.Eventually(t, time.Minute, 200*time.Millisecond, "the workspace to be Unschedulable", func() (bool, string) {
		out := viaProxy.Run(t, "get", "workspace", org+"-later", "-o", `jsonpath={.status.conditions[?(@.type=="WorkspaceScheduled")].reason}|{.spec.cluster}`)
		return out == "Unschedulable|", out
	})
	inRootShard.Run(t, "annotate", "shard", "b", "experimental.core.kcp.io/unschedulable-")
	_, shard = framework.WaitWorkspaceReady(t, viaProxy, org+"-later")
	framework.RequireEqual(t, shard, "b", "shard of "+org+"-later once b is schedulable")
}
