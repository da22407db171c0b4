package apis

import (
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// TestDefaultAPIBindings creates a workspace of a type whose
// defaultAPIBindings name an export: the workspace becomes Ready with the
// binding Bound and the exported resource served.
func TestDefaultAPIBindings(t *testing.T) {
	t.Parallel()
	s := server(t)
	org := s.CreateOrg(t, "e2e-defaults")
	provider := s.CreateWorkspaces(t, org.Path, "provider")[0]
	s.ExportCRD(t, provider, apisCowboyCRD, apisCowboyExport)

	typeName := framework.UniqueName("cowboyland")
	wt := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "tenancy.kcp.io/v1alpha1", "kind": "WorkspaceType",
		"metadata": map[string]any{"name": typeName},
		"spec": map[string]any{
			"extend":             map[string]any{"with": []any{map[string]any{"name": "universal", "path": "root"}}},
			"defaultAPIBindings": []any{map[string]any{"path": provider.Path, "export": apisCowboyExport}},
		},
	}}
	typesGVR := schema.GroupVersionResource{Group: "tenancy.kcp.io", Version: "v1alpha1", Resource: "workspacetypes"}
	if _, err := s.Dynamic(t, org.Path).Resource(typesGVR).Create(framework.CallContext(t), wt, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating WorkspaceType %s: %v", typeName, err)
	}
	ws := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "tenancy.kcp.io/v1alpha1", "kind": "Workspace",
		"metadata": map[string]any{"name": "consumer"},
		"spec":     map[string]any{"type": map[string]any{"name": typeName, "path": org.Path}},
	}}
	if _, err := s.Dynamic(t, org.Path).Resource(framework.WorkspaceGVR).Create(framework.CallContext(t), ws, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating the workspace: %v", err)
	}
	consumer := framework.Workspace{Name: "consumer", Path: org.Path + ":consumer"}
	framework.Eventually(t, time.Minute, 250*time.Millisecond, "workspace "+consumer.Path+" to be Ready", func() (bool, string) {
		got, err := s.Dynamic(t, org.Path).Resource(framework.WorkspaceGVR).Get(framework.CallContext(t), "consumer", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		phase, _, _ := unstructured.NestedString(got.Object, "status", "phase")
		inits, _, _ := unstructured.NestedSlice(got.Object, "status", "initializers")
		return phase == "Ready", fmt.Sprintf("phase %q, initializers %v", phase, inits)
	})
	b, err := s.Dynamic(t, consumer.Path).Resource(framework.APIBindingGVR).Get(framework.CallContext(t), apisCowboyExport, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the default APIBinding %s is missing: %v", apisCowboyExport, err)
	}
	if phase, _, _ := unstructured.NestedString(b.Object, "status", "phase"); phase != "Bound" {
		t.Errorf("default APIBinding phase = %q, want Bound (the workspace must not be Ready before)", phase)
	}
	apisEnsureNamespace(t, s, consumer.Path, "cows")
	apisCreateCowboy(t, s, consumer.Path, "cows", "first")
}
