package garbagecollector

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func owned(uid types.UID, block bool) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "o-" + string(uid), UID: uid, BlockOwnerDeletion: &block}
}

func TestGraphIsPerCluster(t *testing.T) {
	g := newGraph()
	depA := object{Cluster: "a", GroupKind: "ConfigMap", Namespace: "ns", Name: "dep", UID: "d1"}
	depB := object{Cluster: "b", GroupKind: "ConfigMap", Namespace: "ns", Name: "dep", UID: "d1"}
	if _, changed := g.set("cm", depA, []metav1.OwnerReference{owned("o", true)}); !changed {
		t.Fatal("first set should change the graph")
	}
	g.set("cm", depB, []metav1.OwnerReference{owned("o", false)})

	if got := g.dependentsOf("a", "o"); len(got) != 1 || got[0].Cluster != "a" || !got[0].block {
		t.Fatalf("dependents of a/o: got %+v, want a's blocking dep only", got)
	}
	if got := g.dependentsOf("b", "o"); len(got) != 1 || got[0].Cluster != "b" || got[0].block {
		t.Fatalf("dependents of b/o: got %+v, want b's non-blocking dep only", got)
	}
	if g.hasDependents("c", "o") {
		t.Fatal("cluster c has no dependents")
	}
	if old := g.remove("a", "d1"); len(old) != 1 {
		t.Fatalf("remove returned %v, want the one reference", old)
	}
	if g.hasDependents("a", "o") || !g.hasDependents("b", "o") {
		t.Fatal("removing a's dependent must leave b's")
	}
}

func TestGraphSet(t *testing.T) {
	g := newGraph()
	dep := object{Cluster: "a", Name: "dep", UID: "d"}
	refs := []metav1.OwnerReference{owned("o1", false)}
	g.set("cm", dep, refs)
	if _, changed := g.set("cm", dep, refs); changed {
		t.Fatal("same references: no change")
	}
	old, changed := g.set("cm", dep, []metav1.OwnerReference{owned("o2", false)})
	if !changed || len(old) != 1 || old[0].UID != "o1" {
		t.Fatalf("new owner: got old=%v changed=%v", old, changed)
	}
	if g.hasDependents("a", "o1") || !g.hasDependents("a", "o2") {
		t.Fatal("the edge must move from o1 to o2")
	}
	if _, changed := g.set("cm", dep, nil); !changed || g.size() != 0 {
		t.Fatal("no references: the node goes")
	}
}

func TestGraphReplace(t *testing.T) {
	g := newGraph()
	g.set("cm", object{Cluster: "a", UID: "1"}, []metav1.OwnerReference{owned("o", false)})
	g.set("cm", object{Cluster: "a", UID: "2"}, []metav1.OwnerReference{owned("o", false)})
	g.set("other", object{Cluster: "a", UID: "3"}, []metav1.OwnerReference{owned("o", false)})
	gone := g.replace("cm", map[uid]bool{{"a", "1"}: true})
	if len(gone) != 1 || gone[0].UID != "2" {
		t.Fatalf("replace: got %v gone, want node 2", gone)
	}
	if n := len(g.dependentsOf("a", "o")); n != 2 {
		t.Fatalf("after replace: %d dependents, want 2 (one per source)", n)
	}
	if gone := g.dropSource("other"); len(gone) != 1 {
		t.Fatalf("dropSource: got %v", gone)
	}
}

func TestWatchesSynced(t *testing.T) {
	var w watches
	if w.synced() {
		t.Fatal("nothing runs yet: not synced")
	}
	w.running = map[string]context.CancelFunc{"a": func() {}, "b": func() {}}
	w.markListed("a")
	w.markListed("gone") // not running: ignored
	if w.synced() {
		t.Fatal("b has not listed")
	}
	w.markListed("b")
	if !w.synced() {
		t.Fatal("both listed")
	}
}

func TestGoneOwners(t *testing.T) {
	var g goneOwners
	a, b := uid{"a", "o"}, uid{"b", "o"}
	g.add(a)
	if !g.has(a) || g.has(b) {
		t.Fatal("an owner deleted in cluster a is gone there only")
	}
}
