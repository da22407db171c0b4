package tenancy

import (
	"testing"

	corev1alpha1 "github.com/kcp-dev/sdk/apis/core/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// lcOf is the LogicalCluster of cluster name at path, owned by Workspace
// wsName in cluster parent ("" for none).
func lcOf(name, path, parent, wsName string) *corev1alpha1.LogicalCluster {
	lc := &corev1alpha1.LogicalCluster{ObjectMeta: metav1.ObjectMeta{Name: corev1alpha1.LogicalClusterName,
		Annotations: map[string]string{"kcp.io/cluster": name, PathAnnotation: path}}}
	if parent != "" {
		lc.Spec.Owner = &corev1alpha1.LogicalClusterOwner{Resource: "workspaces", Cluster: parent, Name: wsName}
	}
	return lc
}

func TestIndexTrustsTheTree(t *testing.T) {
	i := newIndex()
	i.set(lcOf("root", "root", "", ""), false)
	i.set(lcOf("orgs", "root:orgs", "root", "orgs"), false)
	i.set(lcOf("alice", "root:orgs:alice", "orgs", "alice"), false)
	i.set(lcOf("bob", "root:orgs:bob", "orgs", "bob"), false)
	i.set(lcOf("bobteam", "root:orgs:bob:team", "bob", "team"), false)
	i.set(lcOf(HomeClusterName("carol"), "user:carol", "", ""), false)

	resolves := func(path, want string) {
		t.Helper()
		if got, _ := i.Resolve(path); got != want {
			t.Errorf("%s resolves to %q, want %q", path, got, want)
		}
	}
	resolves("root:orgs:alice", "alice")
	resolves("user:carol", HomeClusterName("carol"))

	// Takeover 4, had the annotation been written: bob's cluster claims
	// alice's path, then root:orgs; bob's team claims root:orgs through
	// a Workspace named like the segment.
	for _, hijack := range []*corev1alpha1.LogicalCluster{
		lcOf("bob", "root:orgs:alice", "orgs", "bob"),
		lcOf("bob", "root:orgs", "orgs", "bob"),
		lcOf("bobteam", "root:orgs", "bob", "orgs"),
		lcOf("bob", "user:alice", "", ""),
		lcOf("bob", "root", "", ""),
	} {
		i.set(hijack, false)
		resolves("root:orgs:alice", "alice")
		resolves("root:orgs", "orgs")
		resolves("root", "root")
		resolves("user:alice", "")
		if p := i.Path("bob"); p != "bob" && p != "root:orgs:bob" {
			t.Errorf("path of bob's cluster claiming %s = %q", hijack.Annotations[PathAnnotation], p)
		}
	}
	// Setting it back gives bob his path again; alice's stayed hers.
	i.set(lcOf("bob", "root:orgs:bob", "orgs", "bob"), false)
	resolves("root:orgs:bob", "bob")
	resolves("root:orgs:alice", "alice")
}

func TestIndexChildBeforeParent(t *testing.T) {
	i := newIndex()
	// A child listed before its parent: taken on its own word, then
	// checked when the parent arrives.
	i.set(lcOf("evil", "root:orgs", "bob", "orgs"), false)
	if got, _ := i.Resolve("root:orgs"); got != "evil" {
		t.Fatalf("root:orgs before the parent is known: %q", got)
	}
	i.set(lcOf("bob", "root:orgs:bob", "orgs", "bob"), false)
	if got, ok := i.Resolve("root:orgs"); ok {
		t.Errorf("root:orgs resolves to %q after the parent showed the claim false", got)
	}
	if got, _ := i.Resolve("root:orgs:bob:orgs"); got != "" {
		t.Errorf("a path never claimed resolves to %q", got)
	}
	// A child agreeing with its parent is kept when the parent arrives.
	i.set(lcOf("team", "root:orgs:alice:team", "alice", "team"), false)
	i.set(lcOf("alice", "root:orgs:alice", "orgs", "alice"), false)
	if got, _ := i.Resolve("root:orgs:alice:team"); got != "team" {
		t.Errorf("root:orgs:alice:team resolves to %q, want team", got)
	}
	// Deleting a cluster forgets its path.
	i.set(lcOf("team", "root:orgs:alice:team", "alice", "team"), true)
	if got, ok := i.Resolve("root:orgs:alice:team"); ok {
		t.Errorf("a deleted cluster's path resolves to %q", got)
	}
}

func TestIndexUnverifiedClaimKeepsOff(t *testing.T) {
	i := newIndex()
	i.set(lcOf("root", "root", "", ""), false)
	i.set(lcOf("orgs", "root:orgs", "root", "orgs"), false)
	// A cluster whose parent is elsewhere claiming a verified path.
	i.set(lcOf("evil", "root:orgs", "elsewhere", "orgs"), false)
	if got, _ := i.Resolve("root:orgs"); got != "orgs" {
		t.Errorf("root:orgs resolves to %q, want orgs", got)
	}
}

func TestPathFitsOwner(t *testing.T) {
	for _, tc := range []struct {
		name    string
		cluster string
		lc      *corev1alpha1.LogicalCluster
		want    bool
	}{
		{"root", "root", lcOf("root", "root", "", ""), true},
		{"root claimed by another cluster", "bob", lcOf("bob", "root", "", ""), false},
		{"a workspace", "bob", lcOf("bob", "root:orgs:bob", "orgs", "bob"), true},
		{"a workspace claiming another's path", "bob", lcOf("bob", "root:orgs:alice", "orgs", "bob"), false},
		{"a home workspace", HomeClusterName("carol"), lcOf(HomeClusterName("carol"), "user:carol", "", ""), true},
		{"another user's home", "bob", lcOf("bob", "user:carol", "", ""), false},
		{"no owner, no home", "bob", lcOf("bob", "root:orgs:bob", "", ""), false},
		{"no path", "bob", lcOf("bob", "", "orgs", "bob"), false},
	} {
		if got := PathFitsOwner(tc.cluster, tc.lc); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
