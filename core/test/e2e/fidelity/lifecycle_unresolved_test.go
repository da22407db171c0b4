package fidelity

import (
	"strings"
	"testing"

	tenancyv1alpha1 "github.com/kcp-dev/sdk/apis/tenancy/v1alpha1"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// TestLifecycleVirtualWorkspacesWithoutCluster checks discovery at the
// initializing and terminating virtual workspaces' URLs themselves, without
// /clusters/<c>: as kcp's virtual workspace server, the path resolves to no
// virtual workspace, so it is refused (403, "Path not resolved to a valid
// virtual workspace") to everybody but system:masters, even to a user who
// may initialize and terminate the type, and found nowhere (404) for
// system:masters.
func TestLifecycleVirtualWorkspacesWithoutCluster(t *testing.T) {
	t.Parallel()
	s := server(t)
	name := framework.UniqueName("lcbare")
	wt := s.CreateWorkspaceType(t, name, true, true)
	grantLifecycle(t, s, name, "carol")
	carol, admin := s.UserToken(t, "carol"), s.AdminToken(t)
	for _, typ := range []tenancyv1alpha1.VirtualWorkspaceType{tenancyv1alpha1.VirtualWorkspaceTypeInitializing, tenancyv1alpha1.VirtualWorkspaceTypeTerminating} {
		base := framework.VirtualWorkspaceURL(wt, typ)
		for _, p := range []string{"/api", "/apis", "/apis/core.kcp.io/v1alpha1"} {
			what := string(typ) + " virtual workspace without /clusters/<c>: GET " + p
			res := s.RequestURL(t, carol, "GET", base+p, "", nil)
			framework.RequireCode(t, res, what+" as a user allowed to use it", 403)
			if st := res.Status(t); !strings.Contains(st.Message, "Path not resolved to a valid virtual workspace") {
				t.Errorf("%s: message %q, want kcp's reason", what, st.Message)
			}
			framework.RequireCode(t, s.RequestURL(t, admin, "GET", base+p, "", nil), what+" as system:masters", 404)
		}
	}
}
