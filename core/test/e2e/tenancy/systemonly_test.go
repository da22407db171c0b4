package tenancy

import (
	"strings"
	"testing"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// TestSystemOnlyMetadata writes, as a workspace admin, every annotation,
// label and field the core derives or trusts (docs/security.md, "System-only
// metadata and fields"): each is refused, or replaced by the true value.
func TestSystemOnlyMetadata(t *testing.T) {
	tn := twoTenants(t)
	team := tn.s.CreateWorkspaces(t, tn.bob.Path, "team")[0]
	// By cluster name: each write is tried on its own, whatever an earlier
	// one did to the path.
	k := tn.s.KubectlAsUser(t, "bob", tn.bob.Cluster)
	annotateLC := func(kv string) []string { return []string{"annotate", "logicalcluster", "cluster", kv, "--overwrite"} }
	patch := func(resource, subresource, p string) []string {
		args := []string{"patch", resource, "--type=merge", "-p", p}
		if subresource != "" {
			args = append(args, "--subresource="+subresource)
		}
		return args
	}

	refused := []struct {
		what  string
		args  []string
		stdin string
	}{
		{"LogicalCluster annotation kcp.io/path", annotateLC("kcp.io/path=" + tn.alice.Path), ""},
		{"LogicalCluster annotation internal.tenancy.kcp.io/type", annotateLC("internal.tenancy.kcp.io/type=" + tn.alice.Path + ":org"), ""},
		{"LogicalCluster annotation core.kcp.io/shard", annotateLC("core.kcp.io/shard=b"), ""},
		{"LogicalCluster annotation internal.tenancy.kcp.io/shard", annotateLC("internal.tenancy.kcp.io/shard=x"), ""},
		{"LogicalCluster annotation kcp.io/shard", annotateLC("kcp.io/shard=b"), ""},
		{"LogicalCluster annotation core.kcp.io/inactive", annotateLC("core.kcp.io/inactive=false"), ""},
		{"LogicalCluster annotation core.kcp.io/max-total-objects", annotateLC("core.kcp.io/max-total-objects=1000000"), ""},
		{"LogicalCluster initializer label", []string{"label", "logicalcluster", "cluster", "initializer.internal.kcp.io/x=y"}, ""},
		{"LogicalCluster terminator label", []string{"label", "logicalcluster", "cluster", "terminator.internal.kcp.io/x=y"}, ""},
		{"LogicalCluster spec.owner", patch("logicalcluster/cluster", "", `{"spec":{"owner":{"cluster":"`+tn.alice.Cluster+`"}}}`), ""},
		{"LogicalCluster spec.directlyDeletable", patch("logicalcluster/cluster", "", `{"spec":{"directlyDeletable":true}}`), ""},
		{"LogicalCluster spec.terminators", patch("logicalcluster/cluster", "", `{"spec":{"terminators":["root:x"]}}`), ""},
		{"LogicalCluster spec.initializers", patch("logicalcluster/cluster", "", `{"spec":{"initializers":["root:x"]}}`), ""},
		{"LogicalCluster status.URL", patch("logicalcluster/cluster", "status", `{"status":{"URL":"https://127.0.0.1:1/clusters/x"}}`), ""},
		{"LogicalCluster delete", []string{"delete", "logicalcluster", "cluster", "--dry-run=server"}, ""},
		{"LogicalCluster create", []string{"create", "-f", "-"}, "apiVersion: core.kcp.io/v1alpha1\nkind: LogicalCluster\nmetadata: {name: other}\n"},
		{"Workspace spec.cluster on create", []string{"create", "-f", "-"}, workspaceNaming("adopt", tn.alice.Cluster)},
		{"Workspace spec.URL", patch("workspace/team", "", `{"spec":{"URL":"https://127.0.0.1:1"}}`), ""},
		{"Workspace status", patch("workspace/team", "status", `{"status":{"phase":"Terminating"}}`), ""},
		{"Workspace owner annotation", []string{"annotate", "workspace", "team", `experimental.tenancy.kcp.io/owner={"username":"alice"}`, "--overwrite"}, ""},
		{"Workspace annotation core.kcp.io/shard", []string{"annotate", "workspace", "team", "core.kcp.io/shard=b", "--overwrite"}, ""},
		{"ConfigMap annotation internal.tenancy.kcp.io/type", []string{"create", "-f", "-"},
			"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: typed\n  namespace: default\n  annotations:\n    internal.tenancy.kcp.io/type: root:org\n"},
	}
	for _, tc := range refused {
		t.Run(tc.what, func(t *testing.T) {
			var out, stderr string
			var err error
			if tc.stdin != "" {
				out, stderr, err = k.RunStdinErr(t, tc.stdin, tc.args...)
			} else {
				out, stderr, err = k.RunErr(t, tc.args...)
			}
			framework.RequireFails(t, out, stderr, err, "bob writing "+tc.what, "forbidden")
		})
	}

	// Replaced by the true value.
	t.Run("ConfigMap annotations kcp.io/cluster and kcp.io/path", func(t *testing.T) {
		k.RunStdin(t, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: claims\n  namespace: default\n  annotations:\n"+
			"    kcp.io/cluster: "+tn.alice.Cluster+"\n    kcp.io/path: "+tn.alice.Path+"\n", "create", "-f", "-")
		framework.RequireEqual(t, k.Run(t, "get", "configmap", "claims", "-n", "default", "-o", `jsonpath={.metadata.annotations.kcp\.io/cluster}`),
			tn.bob.Cluster, "kcp.io/cluster of bob's configmap claiming alice's cluster")
		framework.RequireEqual(t, k.Run(t, "get", "configmap", "claims", "-n", "default", "-o", `jsonpath={.metadata.annotations.kcp\.io/path}`),
			tn.bob.Path, "kcp.io/path of bob's configmap claiming alice's path")
		k.Run(t, "annotate", "configmap", "claims", "-n", "default", "kcp.io/path="+tn.alice.Path, "--overwrite")
		framework.RequireEqual(t, k.Run(t, "get", "configmap", "claims", "-n", "default", "-o", `jsonpath={.metadata.annotations.kcp\.io/path}`),
			tn.bob.Path, "kcp.io/path of bob's configmap after annotating it with alice's path")
	})

	t.Run("Workspace owner annotation on create", func(t *testing.T) {
		k.RunStdin(t, "apiVersion: tenancy.kcp.io/v1alpha1\nkind: Workspace\nmetadata:\n  name: owned\n  annotations:\n"+
			`    experimental.tenancy.kcp.io/owner: '{"username":"alice"}'`+"\n", "create", "-f", "-")
		owner := k.Run(t, "get", "workspace", "owned", "-o", `jsonpath={.metadata.annotations.experimental\.tenancy\.kcp\.io/owner}`)
		if !strings.Contains(owner, `"username":"bob"`) {
			t.Errorf("owner annotation of bob's Workspace claiming alice as owner = %s, want bob", owner)
		}
	})

	// Nothing changed on the objects written.
	framework.RequireEqual(t, k.Run(t, "get", "logicalcluster", "cluster", "-o", `jsonpath={.metadata.annotations.kcp\.io/path}|{.spec.directlyDeletable}|{.status.phase}`),
		tn.bob.Path+"||Ready", "bob's LogicalCluster after the refused writes")
	framework.RequireEqual(t, k.Run(t, "get", "workspace", "team", "-o", `jsonpath={.spec.cluster}|{.status.phase}`),
		team.Cluster+"|Ready", "bob's Workspace team after the refused writes")
}
