package fidelity

import (
	"strings"
	"testing"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// TestVirtualWorkspaceVersion checks that /version through the APIExport
// virtual workspace answers a provider's ServiceAccount as kcp does (kcp's
// /version is open to every authenticated user): in one consumer and on
// the wildcard.
func TestVirtualWorkspaceVersion(t *testing.T) {
	t.Parallel()
	s := server(t)
	e := exportInNewOrg(t, s, "vwversion", "gadgets", "Gadget")
	s.Bind(t, e.consumer, "gadgets", e.provider, e.export, nil)
	token := contentToken(t, s, e.provider, e.export)
	for _, cluster := range []string{"*", e.consumer.Cluster} {
		r := s.RequestURL(t, token, "GET", vwURL(s, e.provider, e.export)+"/clusters/"+cluster+"/version", "", nil)
		framework.RequireCode(t, r, "the provider's ServiceAccount reading /version through the virtual workspace in "+cluster, 200)
		var v struct{ GitVersion string }
		r.JSON(t, &v)
		if v.GitVersion == "" {
			t.Errorf("/version through the virtual workspace in %s has no gitVersion: %s", cluster, r.Body)
		}
	}
	// Callers without credentials still read it outside virtual workspaces.
	r := s.RequestURL(t, "", "GET", strings.TrimSuffix(s.ClusterURL(""), "/")+"/version", "", nil)
	framework.RequireCode(t, r, "an anonymous caller reading /version", 200)
}
