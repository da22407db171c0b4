package garbagecollector

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/registry/rest"
)

// configMaps is a Resource holding one ConfigMap, "owner" (UID "o").
type configMaps struct{ present bool }

func (r *configMaps) Get(_ context.Context, name string, _ *metav1.GetOptions) (runtime.Object, error) {
	if !r.present || name != "owner" {
		return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "configmaps"}, name)
	}
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: "o"}}, nil
}

func (r *configMaps) New() runtime.Object { return &corev1.ConfigMap{} }

func (r *configMaps) Update(context.Context, string, rest.UpdatedObjectInfo, rest.ValidateObjectFunc,
	rest.ValidateObjectUpdateFunc, bool, *metav1.UpdateOptions) (runtime.Object, bool, error) {
	panic("not read-only")
}

func (r *configMaps) Delete(context.Context, string, rest.ValidateObjectFunc, *metav1.DeleteOptions) (runtime.Object, bool, error) {
	panic("not read-only")
}

// TestOwnerStateUnobserved: an owner whose kind no watch covers in its
// cluster (or that the cluster does not serve yet) is kept but marked
// unobserved, so its dependents are read again; once a watch covers it,
// it is solid; gone, it is absent either way.
func TestOwnerStateUnobserved(t *testing.T) {
	res := &configMaps{present: true}
	served := true
	c := New(nil, func(cluster string, gk schema.GroupKind) (Kind, bool) {
		if !served || gk != (schema.GroupKind{Kind: "ConfigMap"}) {
			return Kind{}, false
		}
		return Kind{Resource: res, Namespaced: true, Source: "builtin:configmaps"}, true
	})
	dep := object{Cluster: "a", GroupKind: "Secret", Namespace: "ns", Name: "dep", UID: "d"}
	ref := metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "owner", UID: "o"}
	state := func() ownerState {
		t.Helper()
		s, err := c.ownerState(context.Background(), dep, true, ref)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	if got := state(); got != ownerUnobserved {
		t.Fatalf("owner present, its kind not watched: state %v, want unobserved", got)
	}
	c.watches.hold(ctx, "b", map[string]MakeSource{"builtin:configmaps": func() (Source, error) { return Source{}, nil }},
		func(context.Context, Source, *run) {})
	if got := state(); got != ownerUnobserved {
		t.Fatalf("its kind watched for cluster b only: state %v, want unobserved", got)
	}
	c.watches.hold(ctx, "a", map[string]MakeSource{"builtin:configmaps": func() (Source, error) { return Source{}, nil }},
		func(context.Context, Source, *run) {})
	if got := state(); got != ownerSolid {
		t.Fatalf("its kind watched for cluster a: state %v, want solid", got)
	}
	res.present = false
	if got := state(); got != ownerAbsent {
		t.Fatalf("owner gone: state %v, want absent", got)
	}
	served = false
	if got := state(); got != ownerUnobserved {
		t.Fatalf("kind not served: state %v, want unobserved (read again later)", got)
	}
}
