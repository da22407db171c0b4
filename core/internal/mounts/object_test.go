package mounts

import (
	"strings"
	"testing"

	tenancyv1alpha1 "github.com/kcp-dev/sdk/apis/tenancy/v1alpha1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestRead(t *testing.T) {
	obj := func(annotated bool, status map[string]any) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "x.io/v1", "kind": "KubeCluster",
			"metadata": map[string]any{"name": "m"}}}
		if annotated {
			u.SetAnnotations(map[string]string{IsMountAnnotation: "true"})
		}
		if status != nil {
			u.Object["status"] = status
		}
		return u
	}
	for _, tc := range []struct {
		name      string
		obj       *unstructured.Unstructured
		ready     bool
		reason    string
		phase     tenancyv1alpha1.MountPhaseType
		inMessage string
	}{
		{"ready", obj(true, map[string]any{"URL": "https://m", "phase": "Ready"}), true, "", "Ready", ""},
		{"connecting", obj(true, map[string]any{"URL": "https://m", "phase": "Connecting"}), false, tenancyv1alpha1.MountObjectNotReadyReason, "Connecting", "Connecting"},
		{"no status", obj(true, nil), false, tenancyv1alpha1.MountObjectNotReadyReason, "Unknown", "Unknown"},
		{"ready without URL", obj(true, map[string]any{"phase": "Ready"}), false, tenancyv1alpha1.MountObjectNotReadyReason, "Ready", "status.URL"},
		{"no annotation", obj(false, map[string]any{"URL": "https://m", "phase": "Ready"}), false, tenancyv1alpha1.MountAnnotationInvalidReason, "Unknown", IsMountAnnotation},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := Read(tc.obj)
			if s.Ready() != tc.ready || s.Reason != tc.reason || s.Phase != tc.phase || !strings.Contains(s.Message, tc.inMessage) {
				t.Errorf("Read = %+v (ready %v), want ready %v reason %q phase %q message containing %q", s, s.Ready(), tc.ready, tc.reason, tc.phase, tc.inMessage)
			}
		})
	}
}

func TestWorkspacesIndex(t *testing.T) {
	w := NewWorkspaces()
	var changes int
	w.OnChange(func(Mounted) { changes++ })
	ws := &tenancyv1alpha1.Workspace{}
	ws.Name = "b"
	ws.Annotations = map[string]string{"kcp.io/cluster": "org"}
	ws.Spec.Mount = &tenancyv1alpha1.Mount{Reference: tenancyv1alpha1.ObjectReference{APIVersion: "x.io/v1", Kind: "KubeCluster", Name: "m"}}
	w.Set(ws, false)
	w.Set(ws, false) // unchanged: no change reported
	if m, ok := w.Get("org", "b"); !ok || m.Ref.Name != "m" {
		t.Fatalf("Get(org, b) = %+v, %v; want the mount of m", m, ok)
	}
	if got := w.ByObject(ObjectKey{Cluster: "org", Group: "x.io", Kind: "KubeCluster", Name: "m"}); len(got) != 1 {
		t.Fatalf("ByObject = %v, want workspace b", got)
	}
	w.Set(ws, true)
	if _, ok := w.Get("org", "b"); ok || len(w.List("")) != 0 {
		t.Fatal("a deleted workspace stays in the index")
	}
	if changes != 2 {
		t.Errorf("%d changes reported, want 2 (added, deleted)", changes)
	}
}
