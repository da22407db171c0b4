package gc

import (
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/dynamic"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// The tests here delete the owner of a resource type served a moment ago,
// with a dependent of a watched type (a ConfigMap) the collector already
// verified against it, before the collector may have started watching
// the new type. The collector must catch up when it lists the type: the
// owner is not listed, so its dependents are verified again and
// collected. Everything is done as soon as possible after the type is
// served; before the catch-up the collector watched a new type only
// ~100 ms after the CRD index changed, and the ConfigMap stayed forever.

// deleteOwnerEarly creates an owner Sprocket through dyn and a ConfigMap
// it owns named dependent, waits until the collector has verified the
// ConfigMap with its owner alive, and deletes the owner.
func deleteOwnerEarly(t *testing.T, c cluster, dyn dynamic.ResourceInterface, gvr schema.GroupVersionResource, dependent string) {
	t.Helper()
	ctx := framework.CallContext(t)
	owner, err := dyn.Create(ctx, &unstructured.Unstructured{Object: map[string]any{"apiVersion": gvr.GroupVersion().String(),
		"kind": "Sprocket", "metadata": map[string]any{"name": "owner"}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating the owner sprocket of %s: %v", gvr.Group, err)
	}
	// The ghost owner never existed: the collector drops the reference to
	// it once it has verified the live owner, which tells the test that
	// the collector has seen the dependent with its owner alive.
	ghost := ref("v1", "ConfigMap", "ghost", uuid.NewUUID(), false)
	c.configMap(t, dependent, nil, ref(gvr.GroupVersion().String(), "Sprocket", "owner", owner.GetUID(), false), ghost)
	framework.Eventually(t, 30*time.Second, 2*time.Millisecond, "the reference to the ghost owner to be dropped", func() (bool, string) {
		cm, err := c.cs.CoreV1().ConfigMaps(ns).Get(ctx, dependent, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return len(cm.OwnerReferences) == 1, fmt.Sprintf("references %v", cm.OwnerReferences)
	})
	background := metav1.DeletePropagationBackground
	if err := dyn.Delete(ctx, "owner", metav1.DeleteOptions{PropagationPolicy: &background}); err != nil {
		t.Fatalf("deleting the owner sprocket of %s: %v", gvr.Group, err)
	}
}

// waitServed waits, polling fast, until dyn lists.
func waitServed(t *testing.T, dyn dynamic.ResourceInterface, what string) {
	t.Helper()
	framework.Eventually(t, 30*time.Second, 2*time.Millisecond, what+" to be served", func() (bool, string) {
		_, err := dyn.List(framework.CallContext(t), metav1.ListOptions{})
		return err == nil, framework.ErrString(err)
	})
}

// TestOwnerOfNewCRDTypeDeletedEarly: each round a CRD of a new group (a
// new storage prefix, a type the collector does not watch yet).
func TestOwnerOfNewCRDTypeDeletedEarly(t *testing.T) {
	s := server(t)
	c := newCluster(t, s, "e2e-gc-newtype")
	for i := range 3 {
		group := fmt.Sprintf("newtype%d.gc.e2e.meshplane.io", i)
		gvr := schema.GroupVersionResource{Group: group, Version: "v1", Resource: "sprockets"}
		dyn := s.Dynamic(t, c.name).Resource(gvr).Namespace(ns)
		c.k.RunStdin(t, framework.SchemalessCRD(group, "sprockets", "Sprocket"), "apply", "-f", "-")
		waitServed(t, dyn, "sprockets of "+group)
		deleteOwnerEarly(t, c, dyn, gvr, fmt.Sprintf("of-sprocket-%d", i))
	}
	for i := range 3 {
		c.gone(t, "configmap owned by a sprocket deleted early", "configmap", fmt.Sprintf("of-sprocket-%d", i), "-n", ns)
	}
}

// TestOwnerOfNewBoundTypeDeletedEarly: the first APIBinding to a new
// export (its identity makes a new storage prefix).
func TestOwnerOfNewBoundTypeDeletedEarly(t *testing.T) {
	s := server(t)
	org := s.CreateOrg(t, "e2e-gc-newbound")
	ws := s.CreateWorkspaces(t, org.Path, "provider", "consumer")
	const group = "newbound.gc.e2e.meshplane.io"
	s.ExportCRD(t, ws[0], framework.SchemalessCRD(group, "sprockets", "Sprocket"), group)
	c := clusterAt(t, s, ws[1].Path, s.KubectlFor(ws[1].Path))
	gvr := schema.GroupVersionResource{Group: group, Version: "v1", Resource: "sprockets"}
	dyn := s.Dynamic(t, c.name).Resource(gvr).Namespace(ns)
	if _, err := s.Dynamic(t, ws[1].Path).Resource(framework.APIBindingGVR).Create(framework.CallContext(t),
		framework.APIBinding("sprockets", ws[0].Path, group, nil), metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating the APIBinding: %v", err)
	}
	waitServed(t, dyn, "bound sprockets")
	deleteOwnerEarly(t, c, dyn, gvr, "of-bound-sprocket")
	c.gone(t, "configmap owned by a bound sprocket deleted early", "configmap", "of-bound-sprocket", "-n", ns)
}
