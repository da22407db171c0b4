package garbagecollector

import (
	"context"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

var owner = object{Cluster: "a", GroupKind: "ConfigMap", Namespace: "ns", Name: "owner", UID: "o"}

func TestOrphanStep(t *testing.T) {
	var orphaned []string
	var finalized []string
	s := orphanStep{
		dependents: func(cluster string, uid types.UID) []dependent {
			if cluster != "a" || uid != "o" {
				t.Fatalf("dependents of %s/%s asked", cluster, uid)
			}
			return []dependent{{object: object{Name: "d1"}}, {object: object{Name: "d2"}, block: true}}
		},
		removeOwnerRef: func(_ context.Context, o object, owners ...types.UID) error {
			if !slices.Equal(owners, []types.UID{"o"}) {
				t.Fatalf("removing %v from %s", owners, o.Name)
			}
			orphaned = append(orphaned, o.Name)
			return nil
		},
		removeFinalizer: func(_ context.Context, o object, f string) error {
			finalized = append(finalized, o.Name+"/"+f)
			return nil
		},
	}
	if err := s.reconcile(context.Background(), owner); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(orphaned, []string{"d1", "d2"}) || !slices.Equal(finalized, []string{"owner/orphan"}) {
		t.Fatalf("orphaned %v, finalized %v", orphaned, finalized)
	}
}

func TestForegroundStep(t *testing.T) {
	for _, tc := range []struct {
		name         string
		deps         []dependent
		wantRequeue  bool
		wantFinalize bool
	}{
		{name: "no dependents", wantFinalize: true},
		{name: "only non-blocking dependents", deps: []dependent{{object: object{Name: "d"}}}, wantFinalize: true},
		{name: "a blocking dependent", deps: []dependent{{object: object{Name: "d"}}, {object: object{Name: "b"}, block: true}}, wantRequeue: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var enqueued int
			finalized := false
			s := foregroundStep{
				dependents: func(string, types.UID) []dependent { return tc.deps },
				enqueue:    func(object) { enqueued++ },
				removeFinalizer: func(_ context.Context, _ object, f string) error {
					if f != metav1.FinalizerDeleteDependents {
						t.Fatalf("removing finalizer %q", f)
					}
					finalized = true
					return nil
				},
			}
			requeue, err := s.reconcile(context.Background(), owner)
			if err != nil {
				t.Fatal(err)
			}
			if (requeue > 0) != tc.wantRequeue || finalized != tc.wantFinalize || enqueued != len(tc.deps) {
				t.Fatalf("requeue=%v finalized=%v enqueued=%d", requeue, finalized, enqueued)
			}
		})
	}
}

func TestOwnersStep(t *testing.T) {
	dep := object{Cluster: "a", GroupKind: "ConfigMap", Namespace: "ns", Name: "dep", UID: "d"}
	ref := func(uid types.UID) metav1.OwnerReference { return metav1.OwnerReference{UID: uid, Name: string(uid)} }
	for _, tc := range []struct {
		name          string
		states        map[types.UID]ownerState
		finalizers    []string
		hasDependents bool
		wantDelete    metav1.DeletionPropagation // "" for none
		wantRemoved   []types.UID
		wantUnblock   bool
		wantRecheck   bool
	}{
		{name: "owner alive", states: map[types.UID]ownerState{"x": ownerSolid}},
		{name: "namespaced owner of a cluster-scoped dependent", states: map[types.UID]ownerState{"x": ownerUnresolvable}},
		{name: "owner unobserved", states: map[types.UID]ownerState{"x": ownerUnobserved}, wantRecheck: true},
		{name: "owner unobserved, another gone", states: map[types.UID]ownerState{"x": ownerAbsent, "y": ownerUnobserved},
			wantRemoved: []types.UID{"x"}, wantRecheck: true},
		{name: "owner gone", states: map[types.UID]ownerState{"x": ownerAbsent}, wantDelete: metav1.DeletePropagationBackground},
		{name: "owner gone, dependent asks for orphaning", states: map[types.UID]ownerState{"x": ownerAbsent},
			finalizers: []string{metav1.FinalizerOrphanDependents}, wantDelete: metav1.DeletePropagationOrphan},
		{name: "one of two owners gone", states: map[types.UID]ownerState{"x": ownerAbsent, "y": ownerSolid}, wantRemoved: []types.UID{"x"}},
		{name: "owner waits, leaf dependent", states: map[types.UID]ownerState{"x": ownerWaiting}, wantDelete: metav1.DeletePropagationBackground},
		{name: "owner waits, dependent with dependents", states: map[types.UID]ownerState{"x": ownerWaiting}, hasDependents: true,
			wantDelete: metav1.DeletePropagationForeground, wantUnblock: true},
		{name: "one owner waits, one alive", states: map[types.UID]ownerState{"x": ownerWaiting, "y": ownerSolid}, wantRemoved: []types.UID{"x"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var deleted metav1.DeletionPropagation
			var removed []types.UID
			unblocked := false
			s := ownersStep{
				owner: func(_ context.Context, o object, namespaced bool, r metav1.OwnerReference) (ownerState, error) {
					return tc.states[r.UID], nil
				},
				hasDependents: func(string, types.UID) bool { return tc.hasDependents },
				unblock:       func(context.Context, object) error { unblocked = true; return nil },
				removeOwnerRefs: func(_ context.Context, _ object, owners ...types.UID) error {
					removed = append(removed, owners...)
					return nil
				},
				delete: func(_ context.Context, _ object, p metav1.DeletionPropagation) error { deleted = p; return nil },
			}
			var refs []metav1.OwnerReference
			for _, u := range []types.UID{"x", "y"} {
				if _, ok := tc.states[u]; ok {
					refs = append(refs, ref(u))
				}
			}
			recheck, err := s.reconcile(context.Background(), dep, true, refs, tc.finalizers)
			if err != nil {
				t.Fatal(err)
			}
			if deleted != tc.wantDelete || !slices.Equal(removed, tc.wantRemoved) || unblocked != tc.wantUnblock || (recheck > 0) != tc.wantRecheck {
				t.Fatalf("deleted=%q removed=%v unblocked=%v recheck=%v; want %q %v %v %v", deleted, removed, unblocked, recheck > 0,
					tc.wantDelete, tc.wantRemoved, tc.wantUnblock, tc.wantRecheck)
			}
		})
	}
}
