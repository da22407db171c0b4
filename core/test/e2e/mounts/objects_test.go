package mounts

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// TestMountObjectsCreatedInARow: mount objects created one after another,
// each with its Workspace right after it, are all seen by the core: the
// watch of their resource, started by the first Workspace, delivers the
// objects created after its list.
func TestMountObjectsCreatedInARow(t *testing.T) {
	t.Parallel()
	s := server(t)
	org := s.CreateOrg(t, "inarow")
	inOrg := s.KubectlFor(org.Path)
	// A mount of the kind before its CRD exists.
	inOrg.RunStdin(t, framework.MountedWorkspace("early", "early"), "create", "-f", "-")
	framework.InstallMountpointCRD(t, inOrg)
	base := "/clusters/" + org.Path
	names := []string{"a", "b", "c", "d", "e", "f", "g"}
	for _, n := range names {
		obj, _ := json.Marshal(map[string]any{"apiVersion": "test.mounts.meshplane.io/v1alpha1", "kind": "Mountpoint",
			"metadata": map[string]any{"name": n, "annotations": map[string]any{"experimental.tenancy.kcp.io/is-mount": "true"}}, "spec": map[string]any{}})
		if r := s.AdminRequest(t, http.MethodPost, base+"/apis/test.mounts.meshplane.io/v1alpha1/mountpoints", obj); r.Code != http.StatusCreated {
			t.Fatalf("create Mountpoint %s: %s", n, r)
		}
		st, _ := json.Marshal(map[string]any{"status": map[string]any{"phase": "Connecting", "URL": "https://127.0.0.1:1"}})
		if r := s.RequestWithType(t, s.AdminToken(t), http.MethodPatch, base+"/apis/test.mounts.meshplane.io/v1alpha1/mountpoints/"+n+"/status", "application/merge-patch+json", st); r.Code != http.StatusOK {
			t.Fatalf("status of Mountpoint %s: %s", n, r)
		}
		inOrg.RunStdin(t, framework.MountedWorkspace(n, n), "create", "-f", "-")
	}
	for _, n := range names {
		waitWorkspace(t, inOrg, n, "Unavailable", "False/MountObjectNotReady")
	}
}
