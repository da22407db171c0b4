package sharing

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// testCapacity: a Workspace without a location selector goes to the
// shard with the fewest logical clusters per unit of its weight
// (annotation scheduling.meshplane.io/weight): a heavy shard b takes
// every new one, a heavy root then takes them; a WorkspaceType's
// scheduling.meshplane.io/shard-selector pins its workspaces whatever the
// weights, together with the Workspace's own selector (both must match).
func testCapacity(t *testing.T, sh *framework.Shards) {
	ps := sh.Via
	inRoot := sh.Root.KubectlFor("root")
	weigh := func(shard, weight string) {
		if weight == "" {
			inRoot.Run(t, "annotate", "shard", shard, "scheduling.meshplane.io/weight-")
			return
		}
		inRoot.Run(t, "annotate", "--overwrite", "shard", shard, "scheduling.meshplane.io/weight="+weight)
	}
	t.Cleanup(func() { weigh("root", ""); weigh("b", "") })
	org := framework.CreatePinnedWorkspace(t, ps, "root", framework.UniqueName("capacity"), "root")
	k := ps.KubectlFor(org.Path)
	create := func(name, manifest string) string {
		k.RunStdin(t, manifest, "apply", "-f", "-")
		_, shard := framework.WaitWorkspaceReady(t, k, name)
		return shard
	}
	plain := func(name string) string {
		return fmt.Sprintf("apiVersion: tenancy.kcp.io/v1alpha1\nkind: Workspace\nmetadata:\n  name: %s\n", name)
	}

	for _, c := range []struct{ heavy, light string }{{"b", "root"}, {"root", "b"}} {
		weigh(c.heavy, "1000000")
		weigh(c.light, "")
		for i := range 3 {
			name := fmt.Sprintf("to-%s-%d", c.heavy, i)
			framework.RequireEqual(t, create(name, plain(name)), c.heavy, "shard of "+name+" (shard "+c.heavy+" weighs 1000000)")
		}
	}

	// b is heavy; the type pins its workspaces to root.
	weigh("b", "1000000")
	weigh("root", "")
	k.RunStdin(t, "apiVersion: tenancy.kcp.io/v1alpha1\nkind: WorkspaceType\nmetadata:\n  name: rooted\n  annotations:\n    scheduling.meshplane.io/shard-selector: shard=root\nspec: {}\n", "apply", "-f", "-")
	typed := func(name, selector string) string {
		out := plain(name) + fmt.Sprintf("spec:\n  type:\n    name: rooted\n    path: %s\n", org.Path)
		if selector != "" {
			out += "  location:\n    selector:\n      matchLabels:\n        " + selector + "\n"
		}
		return out
	}
	for i := range 2 {
		name := fmt.Sprintf("rooted-%d", i)
		framework.RequireEqual(t, create(name, typed(name, "")), "root", "shard of "+name+" (its type pins it to shard=root)")
	}
	// The Workspace's own selector and the type's: both must match.
	k.RunStdin(t, typed("nowhere", "shard: b"), "apply", "-f", "-")
	framework.Eventually(t, time.Minute, 250*time.Millisecond, "workspace nowhere (type shard=root, own selector shard=b) to stay unschedulable", func() (bool, string) {
		out := k.Run(t, "get", "workspace", "nowhere", "-o", `jsonpath={.status.phase}|{.status.conditions[?(@.type=="WorkspaceScheduled")].reason}|{.status.conditions[?(@.type=="WorkspaceScheduled")].message}`)
		return strings.HasPrefix(out, "Scheduling|Unschedulable|") && strings.Contains(out, "shard=root"), out
	})
}

// testShardSelectorReserved: scheduling.meshplane.io/ annotations are the
// platform's. alice, cluster-admin of her workspace, may write
// WorkspaceTypes there but neither sets a type's shard-selector (to pick
// the shards its workspaces land on) nor removes or changes the one the
// platform set; the platform's admin does both.
func testShardSelectorReserved(t *testing.T, sh *framework.Shards) {
	ps := sh.Via
	ws := framework.CreatePinnedWorkspace(t, ps, "root", framework.UniqueName("selector"), "b")
	admin := ps.KubectlFor(ws.Path)
	admin.Run(t, "create", "clusterrolebinding", "alice-admin", "--clusterrole=cluster-admin", "--user=alice")
	alice := asUser(t, sh, "alice", ws.Path)
	typ := func(name, annotation string) string {
		out := "apiVersion: tenancy.kcp.io/v1alpha1\nkind: WorkspaceType\nmetadata:\n  name: " + name + "\n"
		if annotation != "" {
			out += "  annotations:\n    " + annotation + "\n"
		}
		return out + "spec: {}\n"
	}
	framework.Eventually(t, 30*time.Second, 250*time.Millisecond, "alice to create a plain WorkspaceType", func() (bool, string) {
		out, errOut, err := alice.RunStdinErr(t, typ("plain", ""), "create", "-f", "-")
		return err == nil, out + errOut
	})
	refused := func(what string, err error, errOut string) {
		t.Helper()
		if err == nil || !strings.Contains(errOut, "forbidden") || !strings.Contains(errOut, "scheduling.meshplane.io/shard-selector") {
			t.Errorf("%s: want a 403 naming the annotation, got err=%v: %s", what, err, errOut)
		}
	}
	_, errOut, err := alice.RunStdinErr(t, typ("pinned", "scheduling.meshplane.io/shard-selector: shard=b"), "create", "-f", "-")
	refused("alice creates a type with a shard-selector", err, errOut)
	_, errOut, err = alice.RunErr(t, "annotate", "workspacetype", "plain", "scheduling.meshplane.io/shard-selector=shard=b")
	refused("alice adds a shard-selector to her type", err, errOut)

	// The platform pins a type; alice may neither lift nor change it.
	admin.Run(t, "annotate", "workspacetype", "plain", "scheduling.meshplane.io/shard-selector=shard=root")
	_, errOut, err = alice.RunErr(t, "annotate", "workspacetype", "plain", "scheduling.meshplane.io/shard-selector-")
	refused("alice removes the platform's shard-selector", err, errOut)
	_, errOut, err = alice.RunErr(t, "annotate", "--overwrite", "workspacetype", "plain", "scheduling.meshplane.io/shard-selector=shard=b")
	refused("alice changes the platform's shard-selector", err, errOut)
	// Her other edits of the type stay hers.
	alice.Run(t, "annotate", "workspacetype", "plain", "note=mine")
	framework.RequireEqual(t, admin.Run(t, "get", "workspacetype", "plain", "-o", `jsonpath={.metadata.annotations.scheduling\.meshplane\.io/shard-selector}`),
		"shard=root", "shard-selector of plain after alice's attempts")
}
