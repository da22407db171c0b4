package gc

import (
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/uuid"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// sprocketCRD is a resource type of its own group: every group is a new
// storage prefix, so a type the collector does not watch yet.
func sprocketCRD(group string) string {
	return fmt.Sprintf(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: sprockets.%[1]s
spec:
  group: %[1]s
  scope: Namespaced
  names: {plural: sprockets, singular: sprocket, kind: Sprocket, listKind: SprocketList}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true
`, group)
}

// TestOwnerOfNewTypeDeletedBeforeWatched: the owner of a resource type
// created a moment ago is deleted, with a dependent of a watched type
// (a ConfigMap) the collector already verified against it, before the
// collector may have started watching the new type. The collector must
// catch up when it lists the type: the owner is not listed, so its
// dependents are verified again and collected. Each round takes a new
// type and does everything as soon as possible after the type is served;
// before the catch-up the collector watched a new type only ~100 ms
// after its CRD changed, and the ConfigMap stayed forever.
func TestOwnerOfNewTypeDeletedBeforeWatched(t *testing.T) {
	s := server(t)
	c := newCluster(t, s, "e2e-gc-newtype")
	for i := range 3 {
		ctx := framework.CallContext(t)
		group := fmt.Sprintf("newtype%d.gc.e2e.meshplane.io", i)
		gvr := schema.GroupVersionResource{Group: group, Version: "v1", Resource: "sprockets"}
		dyn := s.Dynamic(t, c.name).Resource(gvr).Namespace(ns)
		c.k.RunStdin(t, sprocketCRD(group), "apply", "-f", "-")
		framework.Eventually(t, 30*time.Second, 2*time.Millisecond, "sprockets of "+group+" to be served", func() (bool, string) {
			_, err := dyn.List(ctx, metav1.ListOptions{})
			return err == nil, framework.ErrString(err)
		})

		owner, err := dyn.Create(ctx, &unstructured.Unstructured{Object: map[string]any{"apiVersion": gvr.GroupVersion().String(),
			"kind": "Sprocket", "metadata": map[string]any{"name": "owner"}}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("creating the owner sprocket of %s: %v", group, err)
		}
		// The ghost owner never existed: the collector drops the reference
		// to it once it has verified the live owner, which tells the test
		// that the collector has seen the dependent with its owner alive.
		ghost := ref("v1", "ConfigMap", "ghost", uuid.NewUUID(), false)
		name := fmt.Sprintf("of-sprocket-%d", i)
		c.configMap(t, name, nil, ref(gvr.GroupVersion().String(), "Sprocket", "owner", owner.GetUID(), false), ghost)
		framework.Eventually(t, 30*time.Second, 2*time.Millisecond, "the reference to the ghost owner to be dropped", func() (bool, string) {
			cm, err := c.cs.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			return len(cm.OwnerReferences) == 1, fmt.Sprintf("references %v", cm.OwnerReferences)
		})
		background := metav1.DeletePropagationBackground
		if err := dyn.Delete(ctx, "owner", metav1.DeleteOptions{PropagationPolicy: &background}); err != nil {
			t.Fatalf("deleting the owner sprocket of %s: %v", group, err)
		}
	}
	for i := range 3 {
		c.gone(t, "configmap owned by a sprocket deleted early", "configmap", fmt.Sprintf("of-sprocket-%d", i), "-n", ns)
	}
}
