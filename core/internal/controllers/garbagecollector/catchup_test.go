package garbagecollector

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/meshplane/meshplane/core/internal/clusters"
	"github.com/meshplane/meshplane/core/internal/reconciler/runner"
)

func widget(cluster, name string, id types.UID) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "Widget"}}
	u.SetName(name)
	u.SetNamespace("ns")
	u.SetUID(id)
	u.SetAnnotations(map[string]string{clusters.Annotation: cluster})
	return u
}

func configMapOwnedBy(cluster, name string, id types.UID, owner *unstructured.Unstructured) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: id,
		Annotations: map[string]string{clusters.Annotation: cluster},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: owner.GetAPIVersion(), Kind: owner.GetKind(),
			Name: owner.GetName(), UID: owner.GetUID()}}}}
}

// TestListCatchesUpWithOwnersGone: the first list of a type enqueues the
// dependents (of any type) of its owners that the list lacks: deleted
// before the watch ran, no watch saw them go. Those listed are left to
// their watch.
func TestListCatchesUpWithOwnersGone(t *testing.T) {
	c := New(nil, nil)
	var added []runner.Key
	c.add = func(k runner.Key) { added = append(added, k) }
	configMaps := Source{ID: "builtin:configmaps", GroupKind: schema.GroupKind{Kind: "ConfigMap"}}
	widgets := Source{ID: "/example.com/widgets", GroupKind: schema.GroupKind{Group: "example.com", Kind: "Widget"}, KindPerObject: true}

	gone, alive := widget("a", "gone", "w1"), widget("a", "alive", "w2")
	namesake := widget("b", "gone", "w1") // same UID, another cluster: not a's owner
	c.replace(configMaps, nil, []any{
		configMapOwnedBy("a", "of-gone", "c1", gone),
		configMapOwnedBy("a", "of-alive", "c2", alive),
	})
	added = nil

	servedIn := clusterSet{"a": true, "b": true}
	c.replace(widgets, servedIn, []any{alive, namesake})
	want := []runner.Key{{Cluster: "a", Resource: "ConfigMap", Namespace: "ns", Name: "of-gone"}}
	if !slices.Equal(added, want) {
		t.Fatalf("after the widgets' list: enqueued %v, want %v", added, want)
	}

	// An empty list (the type's only object went) catches up too.
	added = nil
	c.replace(widgets, servedIn, nil)
	if len(added) != 2 {
		t.Fatalf("after an empty list: enqueued %v, want both configmaps", added)
	}
}

// TestListCatchesUpInItsClustersOnly: a list of a type judges the owners
// of its kind in the clusters it serves, not those of a namesake type
// stored under another prefix (one cluster's CRD, another's binding):
// their dependents are not read again.
func TestListCatchesUpInItsClustersOnly(t *testing.T) {
	c := New(nil, nil)
	var added []runner.Key
	c.add = func(k runner.Key) { added = append(added, k) }
	configMaps := Source{ID: "builtin:configmaps", GroupKind: schema.GroupKind{Kind: "ConfigMap"}}
	bound := Source{ID: "/example.com/widgets:identity", GroupKind: schema.GroupKind{Group: "example.com", Kind: "Widget"}, KindPerObject: true}
	local := Source{ID: "/example.com/widgets", GroupKind: bound.GroupKind, KindPerObject: true}

	boundGone, localAlive := widget("a", "gone", "w1"), widget("c", "local", "w2")
	c.replace(configMaps, nil, []any{
		configMapOwnedBy("a", "of-bound", "c1", boundGone),
		configMapOwnedBy("c", "of-local", "c2", localAlive),
	})
	added = nil

	c.replace(bound, clusterSet{"a": true}, nil)
	want := []runner.Key{{Cluster: "a", Resource: "ConfigMap", Namespace: "ns", Name: "of-bound"}}
	if !slices.Equal(added, want) {
		t.Fatalf("after the bound widgets' list: enqueued %v, want %v only", added, want)
	}
	added = nil
	c.replace(local, clusterSet{"c": true}, []any{localAlive})
	if len(added) != 0 {
		t.Fatalf("after the local widgets' list, which holds c's owner: enqueued %v", added)
	}
}
