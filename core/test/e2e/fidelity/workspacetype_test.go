package fidelity

import (
	"testing"
	"time"

	tenancyv1alpha1 "github.com/kcp-dev/sdk/apis/tenancy/v1alpha1"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// TestWorkspaceTypeReady checks what clients of a WorkspaceType wait on and
// read: the Ready condition (kubectl wait --for=condition=Ready), with
// VirtualWorkspaceURLsReady, and status.virtualWorkspaces listing both the
// initializing and the terminating URL.
func TestWorkspaceTypeReady(t *testing.T) {
	t.Parallel()
	s := server(t)
	name := framework.UniqueName("lifecycle")
	s.CreateWorkspaceType(t, name, true, true)
	k := s.KubectlFor("root")
	for _, cond := range []string{"Ready", "VirtualWorkspaceURLsReady"} {
		out := k.Run(t, "wait", "--for=condition="+cond, "--timeout="+(30*time.Second).String(), "workspacetype/"+name)
		framework.RequireContains(t, out, "condition met", "kubectl wait --for=condition="+cond+" workspacetype/"+name)
	}
	for typ, want := range map[tenancyv1alpha1.VirtualWorkspaceType]string{
		tenancyv1alpha1.VirtualWorkspaceTypeInitializing: s.BaseURL + "/services/initializingworkspaces/root:" + name,
		tenancyv1alpha1.VirtualWorkspaceTypeTerminating:  s.BaseURL + "/services/terminatingworkspaces/root:" + name,
	} {
		got := k.Run(t, "get", "workspacetype", name, "-o", "jsonpath={.status.virtualWorkspaces[?(@.type==\""+string(typ)+"\")].url}")
		framework.RequireEqual(t, got, want, string(typ)+" URL in status.virtualWorkspaces")
	}
}
