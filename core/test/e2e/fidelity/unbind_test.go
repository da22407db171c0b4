package fidelity

import (
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// TestAPIBindingDeletionWaitsForFinalizers checks kcp's APIBinding
// deletion: the binding stays (condition BindingResourceDeleteSuccess
// False, reason SomeFinalizersRemain) while a bound object is held by its
// own finalizer; the object stays readable in its deleting state; once the
// finalizer is released, the object and then the binding go.
func TestAPIBindingDeletionWaitsForFinalizers(t *testing.T) {
	t.Parallel()
	s := server(t)
	e := exportInNewOrg(t, s, "unbind", "anchors", "Anchor")
	provider, consumer, export := e.provider, e.consumer, e.export
	s.Bind(t, consumer, "anchors", provider, export, nil)
	ck := s.KubectlFor(consumer.Path)
	gvr := schema.GroupVersionResource{Group: "unbind.example.com", Version: "v1", Resource: "anchors"}
	anchors := s.Dynamic(t, consumer.Path).Resource(gvr).Namespace("default")
	framework.Eventually(t, 30*time.Second, 250*time.Millisecond, "anchors to be served", func() (bool, string) {
		_, err := anchors.Create(framework.CallContext(t), &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "unbind.example.com/v1", "kind": "Anchor",
			"metadata": map[string]any{"name": "held", "finalizers": []any{"unbind.example.com/hold"}},
		}}, metav1.CreateOptions{})
		return err == nil, framework.ErrString(err)
	})
	ck.Run(t, "delete", "apibinding", "anchors", "--wait=false")

	bindings := s.Dynamic(t, consumer.Path).Resource(framework.APIBindingGVR)
	framework.Eventually(t, 30*time.Second, 250*time.Millisecond, "the deleting APIBinding to say a finalizer holds its objects", func() (bool, string) {
		b, err := bindings.Get(framework.CallContext(t), "anchors", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		c, _ := framework.Condition(b, "BindingResourceDeleteSuccess")
		return b.GetDeletionTimestamp() != nil && c["status"] == "False" && c["reason"] == "SomeFinalizersRemain" &&
			strings.Contains(framework.Compact(c["message"]), "unbind.example.com/hold in 1 resource instances"), framework.Compact(b.Object["status"])
	})
	held, err := anchors.Get(framework.CallContext(t), "held", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the object held by its finalizer must stay readable while the binding is deleted: %v", err)
	}
	if held.GetDeletionTimestamp() == nil {
		t.Fatalf("the held object has no deletionTimestamp: %s", framework.Compact(held.Object["metadata"]))
	}

	ck.Run(t, "patch", "anchors.unbind.example.com", "held", "-n", "default", "--type=merge", "-p", `{"metadata":{"finalizers":null}}`)
	framework.Eventually(t, 30*time.Second, 250*time.Millisecond, "the APIBinding to go once the finalizer is released", func() (bool, string) {
		_, err := bindings.Get(framework.CallContext(t), "anchors", metav1.GetOptions{})
		return apierrors.IsNotFound(err), framework.ErrString(err)
	})
	if _, err := anchors.List(framework.CallContext(t), metav1.ListOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("anchors must not be served once the binding is gone; list gave %v", err)
	}
}
