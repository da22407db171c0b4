package garbagecollector

import (
	"context"
	"errors"
	"maps"
	"runtime"
	"slices"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
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

func TestGraphOwnersOfKind(t *testing.T) {
	configMap, widgetKind := schema.GroupKind{Kind: "ConfigMap"}, schema.GroupKind{Group: "example.com", Kind: "Widget"}
	g := newGraph()
	g.set("cm", object{Cluster: "a", UID: "1"}, []metav1.OwnerReference{owned("o", false)})
	g.set("cm", object{Cluster: "b", UID: "1"}, []metav1.OwnerReference{owned("o", false)})
	widget := metav1.OwnerReference{APIVersion: "example.com/v1", Kind: "Widget", Name: "w", UID: "w"}
	g.set("cm", object{Cluster: "a", UID: "2"}, []metav1.OwnerReference{owned("o", false), widget})
	if got := g.ownersOfKind(configMap, nil); len(got) != 2 {
		t.Fatalf("ConfigMap owners: got %v, want a/o and b/o", got)
	}
	for _, in := range []clusterSet{{"b": true}, {"b": true, "c": true, "d": true}} {
		if got := g.ownersOfKind(configMap, in); len(got) != 1 || got[0] != (uid{"b", "o"}) {
			t.Fatalf("ConfigMap owners in %v: got %v, want b/o only", in, got)
		}
	}
	if got := g.ownersOfKind(configMap, clusterSet{}); len(got) != 0 {
		t.Fatalf("ConfigMap owners in no cluster: got %v", got)
	}
	if got := g.ownersOfKind(widgetKind, nil); len(got) != 1 || got[0] != (uid{"a", "w"}) {
		t.Fatalf("Widget owners: got %v, want a/w", got)
	}
	g.remove("a", "2")
	if got := g.ownersOfKind(widgetKind, nil); len(got) != 0 {
		t.Fatalf("Widget owners after its only dependent went: %v", got)
	}
	if got := g.ownersOfKind(configMap, nil); len(got) != 2 {
		t.Fatalf("a/o keeps its other dependent: got %v", got)
	}
	g.replace("cm", nil)
	if got := g.ownersOfKind(configMap, nil); len(got) != 0 || len(g.ownerKinds) != 0 {
		t.Fatalf("no dependents left, owners %v, index %v", got, g.ownerKinds)
	}
}

func TestWatchesSynced(t *testing.T) {
	var w watches
	if w.synced() {
		t.Fatal("nothing runs yet: not synced")
	}
	a, b := &run{}, &run{}
	w.running = map[string]*run{"a": a, "b": b}
	w.markListed(a)
	if w.synced() {
		t.Fatal("b has not listed")
	}
	w.markListed(b)
	if !w.synced() {
		t.Fatal("both listed")
	}
}

// TestWatchesHold: a source is made and watched once however many
// holders need it, and stopped when the last one no longer does; one
// that cannot be made yet is tried again on its holder's next hold.
func TestWatchesHold(t *testing.T) {
	var w watches
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	started := map[string]context.Context{}
	var mu sync.Mutex
	start := func(ctx context.Context, s Source, _ *run) {
		mu.Lock()
		defer mu.Unlock()
		started[s.ID] = ctx
	}
	made := map[string]int{}
	ready := false
	want := func(ids ...string) map[string]MakeSource {
		m := map[string]MakeSource{}
		for _, id := range ids {
			m[id] = func() (Source, error) {
				if id == "late" && !ready {
					return Source{}, errors.New("not yet")
				}
				made[id]++
				return Source{ID: id}, nil
			}
		}
		return m
	}
	waitStarted := func(id string) context.Context {
		for {
			mu.Lock()
			c := started[id]
			mu.Unlock()
			if c != nil {
				return c
			}
			runtime.Gosched()
		}
	}

	w.hold(ctx, "a", want("shared", "late"), start)
	w.hold(ctx, "b", want("shared"), start)
	if made["shared"] != 1 || made["late"] != 0 {
		t.Fatalf("made %v, want shared once and late not yet", made)
	}
	ready = true
	w.hold(ctx, "a", want("shared", "late"), start)
	if made["shared"] != 1 || made["late"] != 1 {
		t.Fatalf("made %v, want late on a's next hold", made)
	}
	shared := waitStarted("shared")
	if in := w.serves(w.running["shared"]); !maps.Equal(in, clusterSet{"a": true, "b": true}) {
		t.Fatalf("shared serves %v, want its holders a and b", in)
	}
	if !w.watching("late", "a") || w.watching("late", "b") || w.watching("other", "a") {
		t.Fatal("late is watched for its holder a only")
	}
	if stopped := w.hold(ctx, "a", nil, start); !slices.Equal(stopped, []string{"late"}) {
		t.Fatalf("a lets go of everything: stopped %v, want late (b still needs shared)", stopped)
	}
	if shared.Err() != nil {
		t.Fatal("shared stopped while b needs it")
	}
	if stopped := w.hold(ctx, "b", nil, start); !slices.Equal(stopped, []string{"shared"}) || shared.Err() == nil {
		t.Fatalf("b lets go: stopped %v, want shared cancelled", stopped)
	}
	if len(w.held) != 0 || len(w.running) != 0 {
		t.Fatalf("nothing held: held %v running %v", w.held, w.running)
	}
}

// TestWatchesBuiltinServesEveryCluster: a source the built-in holder
// needs lists and watches every cluster's objects.
func TestWatchesBuiltinServesEveryCluster(t *testing.T) {
	var w watches
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w.hold(ctx, Builtin, map[string]MakeSource{"builtin:configmaps": func() (Source, error) { return Source{}, nil }},
		func(context.Context, Source, *run) {})
	if in := w.serves(w.running["builtin:configmaps"]); in != nil {
		t.Fatalf("a built-in source serves %v, want every cluster (nil)", in)
	}
	if !w.watching("builtin:configmaps", "any") {
		t.Fatal("a built-in source watches every cluster")
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
