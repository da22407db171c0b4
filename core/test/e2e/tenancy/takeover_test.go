package tenancy

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// workspaceNaming is a Workspace whose spec.cluster names cluster.
func workspaceNaming(name, cluster string) string {
	return fmt.Sprintf("apiVersion: tenancy.kcp.io/v1alpha1\nkind: Workspace\nmetadata:\n  name: %s\nspec:\n  cluster: %s\n", name, cluster)
}

// requireIntact checks that alice's org is Ready and holds her data.
func requireIntact(t *testing.T, tn *tenants, what string) {
	t.Helper()
	phase := tn.s.KubectlFor("root").Run(t, "get", "workspace", tn.alice.Name, "-o", "jsonpath={.status.phase}")
	framework.RequireEqual(t, phase, "Ready", what+": phase of alice's org "+tn.alice.Path)
	framework.RequireData(t, tn.aliceK.GetConfigMap(t, "default", "crown-jewels"), map[string]string{"owner": "alice"}, what+": alice's configmap")
}

// TestTakeoverWorkspaceOverAnotherOrgsCluster is takeover 3 of issue 28:
// with `Impersonate-Group: system:masters` (his RBAC in his org allowed
// any impersonation) bob created a Workspace in his org whose spec.cluster
// is alice's org's logical cluster and deleted it: the workspace
// controller deleted her LogicalCluster with it. The same header made him
// the system for the deep SubjectAccessReview header and for deleting his
// own LogicalCluster.
func TestTakeoverWorkspaceOverAnotherOrgsCluster(t *testing.T) {
	tn := twoTenants(t)
	tn.aliceK.Run(t, "create", "configmap", "crown-jewels", "-n", "default", "--from-literal=owner=alice")

	grab := workspaceNaming("grab", tn.alice.Cluster)
	for _, as := range [][]string{nil, {"--as=bob", "--as-group=system:masters"}} {
		out, stderr, err := tn.bobK.RunStdinErr(t, grab, append([]string{"create", "--validate=false", "-f", "-"}, as...)...)
		framework.RequireFails(t, out, stderr, err, fmt.Sprintf("bob creating a Workspace over alice's cluster %s (flags %v)", tn.alice.Cluster, as), "forbidden")
	}
	// Not even the system adopts a cluster another Workspace owns.
	out, stderr, err := tn.s.KubectlFor(tn.bob.Path).RunStdinErr(t, grab, "create", "-f", "-")
	framework.RequireFails(t, out, stderr, err, "system:masters creating a Workspace over alice's cluster", "belongs to another workspace")
	requireIntact(t, tn, "after the Workspace over her cluster was refused")

	// The deep SubjectAccessReview header is the system's.
	sar := `{"apiVersion":"authorization.k8s.io/v1","kind":"SubjectAccessReview","spec":{"user":"bob","resourceAttributes":{"verb":"get","resource":"secrets"}}}`
	code, body := request(t, tn.s, tn.s.UserToken(t, "bob"), "POST", "/clusters/"+tn.bob.Path+"/apis/authorization.k8s.io/v1/subjectaccessreviews",
		[]byte(sar), map[string]string{"Impersonate-User": "bob", "Impersonate-Group": "system:masters", "X-Kcp-Internal-Deep-SubjectAccessReview": "true"})
	framework.RequireEqual(t, code, http.StatusForbidden, "bob's deep SubjectAccessReview as system:masters: "+body)

	// His own LogicalCluster: not deleted, not made deletable.
	for _, tc := range []struct {
		what string
		args []string
	}{
		{"deleting his LogicalCluster as system:masters", []string{"delete", "logicalcluster", "cluster", "--dry-run=server", "--as=bob", "--as-group=system:masters"}},
		{"deleting his LogicalCluster", []string{"delete", "logicalcluster", "cluster", "--dry-run=server"}},
		{"making his LogicalCluster directly deletable", []string{"patch", "logicalcluster", "cluster", "--type=merge", "-p", `{"spec":{"directlyDeletable":true}}`}},
	} {
		out, stderr, err := tn.bobK.RunErr(t, tc.args...)
		framework.RequireFails(t, out, stderr, err, "bob "+tc.what, "forbidden")
	}
	requireIntact(t, tn, "at the end")
}

// TestTakeoverPathAnnotation is takeover 4 of issue 28: `kubectl annotate
// logicalcluster cluster kcp.io/path=<alice's path> --overwrite` by bob
// moved her path to his cluster (the path index took the last writer);
// pointed at root it made everything under root resolve into his. Only
// the system writes kcp.io/path on a LogicalCluster, in an org and in a
// home workspace alike.
func TestTakeoverPathAnnotation(t *testing.T) {
	tn := twoTenants(t)
	tn.aliceK.Run(t, "create", "configmap", "crown-jewels", "-n", "default", "--from-literal=owner=alice")
	bobToken := tn.s.UserToken(t, "bob")
	framework.Eventually(t, 2*time.Minute, 250*time.Millisecond, "bob's home workspace", func() (bool, string) {
		code, body := request(t, tn.s, bobToken, "GET", "/clusters/root/apis/tenancy.kcp.io/v1alpha1/workspaces/~", nil, nil)
		return code == http.StatusOK, fmt.Sprintf("%d %s", code, body)
	})
	home := tn.s.KubectlAsUser(t, "bob", "user:bob")

	for _, target := range []string{tn.alice.Path, "root"} {
		for _, tc := range []struct {
			where string
			k     *framework.Kubectl
			flags []string
		}{
			{"his org", tn.bobK, nil},
			{"his org as system:masters", tn.bobK, []string{"--as=bob", "--as-group=system:masters"}},
			{"his home workspace", home, nil},
		} {
			args := append([]string{"annotate", "logicalcluster", "cluster", "kcp.io/path=" + target, "--overwrite"}, tc.flags...)
			out, stderr, err := tc.k.RunErr(t, args...)
			framework.RequireFails(t, out, stderr, err, "bob pointing the path of "+tc.where+" at "+target, "forbidden")
		}
	}
	// alice's path still leads to her cluster and her data.
	got := tn.s.KubectlFor(tn.alice.Path).Run(t, "get", "logicalcluster", "cluster", "-o", `jsonpath={.metadata.annotations.kcp\.io/cluster}`)
	framework.RequireEqual(t, got, tn.alice.Cluster, "the cluster "+tn.alice.Path+" resolves to")
	requireIntact(t, tn, "after bob's annotations")
	framework.RequireEqual(t, tn.bobK.Run(t, "get", "logicalcluster", "cluster", "-o", `jsonpath={.metadata.annotations.kcp\.io/path}`),
		tn.bob.Path, "the path of bob's org")
}
