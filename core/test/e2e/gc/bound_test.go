package gc

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

const gizmoCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gizmos.bound.gc.e2e.meshplane.io
spec:
  group: bound.gc.e2e.meshplane.io
  scope: Namespaced
  names: {plural: gizmos, singular: gizmo, kind: Gizmo, listKind: GizmoList}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            x-kubernetes-preserve-unknown-fields: true
`

// gizmoExport is the APIExport apigen makes of gizmoCRD (its group).
const gizmoExport = "bound.gc.e2e.meshplane.io"

var gizmos = schema.GroupVersionResource{Group: "bound.gc.e2e.meshplane.io", Version: "v1", Resource: "gizmos"}

// TestBoundResourceCascade: resources bound through an APIBinding own and
// are owned like any other; two consumers of the same export (one
// storage, one watch) never see each other's owners.
func TestBoundResourceCascade(t *testing.T) {
	s := server(t)
	org := s.CreateOrg(t, "e2e-gc-bound")
	ws := s.CreateWorkspaces(t, org.Path, "provider", "one", "two")
	s.ExportCRD(t, ws[0], gizmoCRD, gizmoExport)
	var consumers []cluster
	var dyns []dynamic.ResourceInterface
	for _, w := range ws[1:] {
		s.Bind(t, w, "gizmos", ws[0], gizmoExport, nil)
		c := clusterAt(t, s, w.Path, s.KubectlFor(w.Path))
		consumers = append(consumers, c)
		dyn := s.Dynamic(t, w.Path).Resource(gizmos).Namespace(ns)
		dyns = append(dyns, dyn)
		framework.Eventually(t, 30*time.Second, 250*time.Millisecond, "gizmos to be served in "+w.Path, func() (bool, string) {
			_, err := dyn.List(framework.CallContext(t), metav1.ListOptions{})
			return err == nil, framework.ErrString(err)
		})
	}
	gizmo := func(i int, name string, owners ...metav1.OwnerReference) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": gizmos.GroupVersion().String(), "kind": "Gizmo",
			"metadata": map[string]any{"name": name}}}
		u.SetOwnerReferences(owners)
		out, err := dyns[i].Create(framework.CallContext(t), u, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("creating gizmo %s in %s: %v", name, consumers[i].name, err)
		}
		return out
	}
	gRef := func(g *unstructured.Unstructured) metav1.OwnerReference {
		return ref(gizmos.GroupVersion().String(), "Gizmo", g.GetName(), g.GetUID(), true)
	}
	for i := range consumers {
		owner := gizmo(i, "owner")
		gizmo(i, "child", gRef(owner))
		consumers[i].configMap(t, "of-gizmo", nil, gRef(owner))
	}
	one, two := consumers[0], consumers[1]
	one.k.Run(t, "delete", "gizmo", "owner", "-n", ns, "--cascade=foreground", "--timeout=60s")
	one.gone(t, "bound dependent", "gizmo", "child", "-n", ns)
	one.gone(t, "configmap owned by a bound gizmo", "configmap", "of-gizmo", "-n", ns)
	two.stays(t, "the other consumer's owner and dependents", "gizmo/owner", "gizmo/child", "configmap/of-gizmo", "-n", ns)

	two.k.Run(t, "delete", "gizmo", "owner", "-n", ns)
	two.gone(t, "bound dependent in the second consumer", "gizmo", "child", "-n", ns)
	two.gone(t, "configmap of the second consumer", "configmap", "of-gizmo", "-n", ns)
}
