package crd

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
)

// TestCoreGroupValidation checks that objects of a bound resource of the
// core group (apiVersion v1) pass validation on create, update and status
// update, that a wrong apiVersion or a schema violation is still refused,
// and that the object keeps its apiVersion.
func TestCoreGroupValidation(t *testing.T) {
	b, _, _ := newBuilder(t)
	crd := widgetCRD()
	crd.Name, crd.Spec.Group = "widgets.", ""
	info, err := b.build(crd, StoragePrefix(crd))
	if err != nil {
		t.Fatalf("build: %v", err)
	}
	if got := StoragePrefix(crd); got != "/widgets" {
		t.Errorf("storage prefix %q, want /widgets", got)
	}
	ctx := genericapirequest.WithNamespace(context.Background(), "default")
	widget := func(apiVersion string, size any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": apiVersion, "kind": "Widget",
			"metadata": map[string]any{"name": "w", "namespace": "default", "resourceVersion": "1"}, "spec": map[string]any{"size": size}}}
	}
	store := info.storage["v1"].CustomResource.Store
	obj := widget("v1", int64(1))
	if errs := store.CreateStrategy.Validate(ctx, obj); len(errs) > 0 {
		t.Errorf("create of a v1 Widget: %v", errs)
	}
	if errs := store.UpdateStrategy.ValidateUpdate(ctx, widget("v1", int64(2)), widget("v1", int64(1))); len(errs) > 0 {
		t.Errorf("update of a v1 Widget: %v", errs)
	}
	status := info.statusStorage["v1"].(*statusREST).store.UpdateStrategy
	withStatus := func(ready any) *unstructured.Unstructured {
		w := widget("v1", int64(1))
		w.Object["status"] = map[string]any{"ready": ready}
		return w
	}
	if errs := status.ValidateUpdate(ctx, withStatus(true), withStatus(false)); len(errs) > 0 {
		t.Errorf("status update of a v1 Widget: %v", errs)
	}
	if errs := status.ValidateUpdate(ctx, withStatus("yes"), withStatus(false)); len(errs) == 0 {
		t.Errorf("a status update against the status schema passed validation")
	}
	if errs := store.UpdateStrategy.ValidateUpdate(ctx, widget("v1", "big"), widget("v1", int64(1))); len(errs) == 0 {
		t.Errorf("an update against the schema passed validation")
	}
	for name, bad := range map[string]*unstructured.Unstructured{
		"another apiVersion": widget("example.com/v1", int64(1)),
		"a schema violation": widget("v1", "big"),
		"another kind":       {Object: map[string]any{"apiVersion": "v1", "kind": "Gadget", "metadata": map[string]any{"name": "w", "namespace": "default"}}},
		"a bad name":         {Object: map[string]any{"apiVersion": "v1", "kind": "Widget", "metadata": map[string]any{"name": "W_", "namespace": "default"}}},
	} {
		if errs := store.CreateStrategy.Validate(ctx, bad); len(errs) == 0 {
			t.Errorf("create of a Widget with %s passed validation", name)
		}
	}
}
