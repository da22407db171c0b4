package fidelity

import (
	"strings"
	"testing"
	"time"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// TestVirtualWorkspaceShadowedResource checks, as kcp's e2e does, that a
// provider reading an exported resource through its APIExport virtual
// workspace in a consumer whose binding does not serve it (a CRD of the
// consumer holds the resource: NamingConflicts) is refused with 403, and
// never reaches the consumer's own CRD objects.
func TestVirtualWorkspaceShadowedResource(t *testing.T) {
	t.Parallel()
	s := server(t)
	e := exportInNewOrg(t, s, "shadowed", "gadgets", "Gadget")
	k := s.KubectlFor(e.consumer.Path)
	k.RunStdin(t, framework.SchemalessCRD(e.export, "gadgets", "Gadget"), "create", "-f", "-")
	framework.Eventually(t, 30*time.Second, 250*time.Millisecond, "the consumer's own gadgets to be served", func() (bool, string) {
		_, stderr, err := k.RunStdinErr(t, "apiVersion: "+e.export+"/v1\nkind: Gadget\nmetadata: {name: private, namespace: default}\n", "create", "-f", "-")
		return err == nil, stderr
	})
	k.RunStdin(t, `apiVersion: apis.kcp.io/v1alpha2
kind: APIBinding
metadata: {name: gadgets}
spec: {reference: {export: {path: `+e.provider.Path+`, name: `+e.export+`}}}
`, "create", "-f", "-")
	framework.Eventually(t, 60*time.Second, 250*time.Millisecond, "NamingConflicts on the binding", func() (bool, string) {
		got := k.Run(t, "get", "apibinding", "gadgets", "-o", `jsonpath={.status.conditions[?(@.type=="InitialBindingCompleted")].reason}`)
		return got == "NamingConflicts", got
	})

	token := contentToken(t, s, e.provider, e.export)
	base := vwURL(s, e.provider, e.export) + "/clusters/" + e.consumer.Cluster + "/apis/" + e.export + "/v1"
	for _, path := range []string{"/gadgets", "/namespaces/default/gadgets", "/namespaces/default/gadgets/private"} {
		r := s.RequestURL(t, token, "GET", base+path, "", nil)
		framework.RequireCode(t, r, "the provider reading "+path+" of the consumer whose CRD shadows the export", 403)
		if strings.Contains(string(r.Body), `"kind":"Gadget"`) {
			t.Errorf("the provider read the consumer's own gadget through the virtual workspace: %s", r.Body)
		}
	}
	r := s.RequestURL(t, token, "POST", base+"/namespaces/default/gadgets", "application/json",
		[]byte(`{"apiVersion":"`+e.export+`/v1","kind":"Gadget","metadata":{"name":"planted","namespace":"default"}}`))
	framework.RequireCode(t, r, "the provider creating a gadget in the consumer whose CRD shadows the export", 403)
	framework.RequireEqual(t, strings.Join(framework.Names(k.Run(t, "get", "gadgets", "-n", "default", "-o", "name")), ","),
		"gadget."+e.export+"/private", "the consumer's own gadgets")
}

// vwURL is the APIExport virtual workspace URL of an export (an endpoint
// slice lists it only once a consumer binds the export).
func vwURL(s *framework.Server, provider framework.Workspace, export string) string {
	return strings.TrimSuffix(s.ClusterURL(""), "/") + "/services/apiexport/" + provider.Cluster + "/" + export
}
