package fidelity

import (
	"strings"
	"testing"
	"time"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// TestAPIBindingNamingConflicts checks kcp's handling of resources that
// collide in a consumer: a second binding of a resource another binding
// serves gets BindingUpToDate and InitialBindingCompleted False with reason
// NamingConflicts (kcp's messages) and serves nothing; a CRD of a bound
// resource is refused; a bound name (singular, kind...) already used by a CRD of the group is
// a naming conflict. The first binding keeps serving.
func TestAPIBindingNamingConflicts(t *testing.T) {
	t.Parallel()
	s := server(t)
	e := exportInNewOrg(t, s, "conflicts", "gadgets", "Gadget")
	provider2 := s.CreateWorkspaces(t, e.org.Path, "provider2")[0]
	s.ExportCRD(t, provider2, framework.SchemalessCRD(e.export, "gadgets", "Gadget"), e.export)
	s.ExportCRD(t, provider2, framework.SchemalessCRD("names.example.com", "things", "Gizmo"), "names.example.com")
	s.Bind(t, e.consumer, "first", e.provider, e.export, nil)

	k := s.KubectlFor(e.consumer.Path)
	conflict := func(binding, message string) {
		t.Helper()
		framework.Eventually(t, 60*time.Second, 250*time.Millisecond, "NamingConflicts on APIBinding "+binding, func() (bool, string) {
			got := k.Run(t, "get", "apibinding", binding, "-o",
				`jsonpath={.status.conditions[?(@.type=="InitialBindingCompleted")].reason}|{.status.conditions[?(@.type=="BindingUpToDate")].reason}|{.status.conditions[?(@.type=="BindingUpToDate")].message}|{.status.phase}`)
			return got == "NamingConflicts|NamingConflicts|"+message+"|Binding", got
		})
		framework.RequireEqual(t, k.Run(t, "get", "apibinding", binding, "-o", "jsonpath={.status.boundResources}"), "", "bound resources of "+binding)
	}

	k.RunStdin(t, `apiVersion: apis.kcp.io/v1alpha2
kind: APIBinding
metadata: {name: second}
spec: {reference: {export: {path: `+provider2.Path+`, name: `+e.export+`}}}
`, "create", "-f", "-")
	conflict("second", "Unable to bind APIs because they are bound by other APIBindings or CRDs: map[gadgets."+e.export+":{first false}]")

	out, stderr, err := k.RunStdinErr(t, framework.SchemalessCRD(e.export, "gadgets", "Gadget"), "create", "-f", "-")
	framework.RequireFails(t, out, stderr, err, "a CRD of the bound resource",
		`customresourcedefinitions.apiextensions.k8s.io "gadgets.`+e.export+`" is forbidden: cannot create because resource is bound by APIBinding "first"`)

	k.RunStdin(t, framework.SchemalessCRD("names.example.com", "gizmos", "Gizmo"), "create", "-f", "-")
	framework.Eventually(t, 30*time.Second, 250*time.Millisecond, "the consumer's gizmos CRD to be established", func() (bool, string) {
		got := k.Run(t, "get", "crd", "gizmos.names.example.com", "-o", `jsonpath={.status.conditions[?(@.type=="Established")].status}`)
		return got == "True", got
	})
	k.RunStdin(t, `apiVersion: apis.kcp.io/v1alpha2
kind: APIBinding
metadata: {name: things}
spec: {reference: {export: {path: `+provider2.Path+`, name: names.example.com}}}
`, "create", "-f", "-")
	conflict("things", `Unable to bind APIs: naming conflict with CustomResourceDefinition "gizmos.names.example.com": spec.names.singular=gizmo is forbidden`)

	framework.RequireEqual(t, k.Run(t, "get", "apibinding", "first", "-o", "jsonpath={.status.phase}"), "Bound", "phase of the first binding")
	// provider2 reaches nothing of the consumer through its virtual
	// workspace: its binding serves nothing there.
	token := contentToken(t, s, provider2, e.export)
	base := vwURL(s, provider2, e.export) + "/clusters/" + e.consumer.Cluster + "/apis/" + e.export + "/v1"
	r := s.RequestURL(t, token, "GET", base+"/gadgets", "", nil)
	framework.RequireCode(t, r, "provider2 listing gadgets in the consumer through its virtual workspace", 403)
	k.RunStdin(t, "apiVersion: "+e.export+"/v1\nkind: Gadget\nmetadata: {name: g1, namespace: default}\n", "create", "-f", "-")
	framework.RequireEqual(t, k.Run(t, "get", "gadgets", "g1", "-n", "default", "-o", "jsonpath={.metadata.name}"), "g1", "a gadget of the first binding")
}

// TestAPIBindingPartialConflict checks kcp's partial binding: of an export
// of gadgets and widgets, a consumer whose own CRD holds widgets binds and
// serves gadgets (NamingConflicts for widgets, boundResources gadgets
// only, not Ready). Through its virtual workspace the provider reaches the
// consumer's gadgets but never the consumer's own widgets (403).
func TestAPIBindingPartialConflict(t *testing.T) {
	t.Parallel()
	s := server(t)
	org := s.CreateOrg(t, "partial")
	ws := s.CreateWorkspaces(t, org.Path, "provider", "consumer")
	provider, consumer := ws[0], ws[1]
	const group = "partial.example.com"
	s.ExportCRD(t, provider, framework.SchemalessCRD(group, "gadgets", "Gadget")+"---\n"+framework.SchemalessCRD(group, "widgets", "Widget"), group)
	k := s.KubectlFor(consumer.Path)
	k.RunStdin(t, framework.SchemalessCRD(group, "widgets", "Widget"), "create", "-f", "-")
	framework.Eventually(t, 30*time.Second, 250*time.Millisecond, "the consumer's own widgets to be served", func() (bool, string) {
		_, stderr, err := k.RunStdinErr(t, "apiVersion: "+group+"/v1\nkind: Widget\nmetadata: {name: private, namespace: default}\n", "create", "-f", "-")
		return err == nil, stderr
	})
	k.RunStdin(t, `apiVersion: apis.kcp.io/v1alpha2
kind: APIBinding
metadata: {name: partial}
spec: {reference: {export: {path: `+provider.Path+`, name: `+group+`}}}
`, "create", "-f", "-")
	want := "NamingConflicts|Unable to bind APIs because they are bound by other APIBindings or CRDs: map[widgets." + group + ":{ true}]|gadgets|False"
	framework.Eventually(t, 60*time.Second, 250*time.Millisecond, "the binding to serve gadgets only", func() (bool, string) {
		got := k.Run(t, "get", "apibinding", "partial", "-o",
			`jsonpath={.status.conditions[?(@.type=="BindingUpToDate")].reason}|{.status.conditions[?(@.type=="BindingUpToDate")].message}|{.status.boundResources[*].resource}|{.status.conditions[?(@.type=="Ready")].status}`)
		return got == want, got
	})
	framework.Eventually(t, 30*time.Second, 250*time.Millisecond, "gadgets to be served in the consumer", func() (bool, string) {
		_, stderr, err := k.RunStdinErr(t, "apiVersion: "+group+"/v1\nkind: Gadget\nmetadata: {name: g1, namespace: default}\n", "create", "-f", "-")
		return err == nil, stderr
	})

	token := contentToken(t, s, provider, group)
	base := vwURL(s, provider, group) + "/clusters/" + consumer.Cluster + "/apis/" + group + "/v1/namespaces/default"
	r := s.RequestURL(t, token, "GET", base+"/gadgets/g1", "", nil)
	framework.RequireCode(t, r, "the provider reading the consumer's gadget through its virtual workspace", 200)
	for _, path := range []string{"/widgets", "/widgets/private"} {
		r := s.RequestURL(t, token, "GET", base+path, "", nil)
		framework.RequireCode(t, r, "the provider reading the consumer's own "+path+" through its virtual workspace", 403)
		if strings.Contains(string(r.Body), `"kind":"Widget"`) {
			t.Errorf("the provider read the consumer's own widget: %s", r.Body)
		}
	}
	r = s.RequestURL(t, token, "POST", base+"/widgets", "application/json",
		[]byte(`{"apiVersion":"`+group+`/v1","kind":"Widget","metadata":{"name":"planted","namespace":"default"}}`))
	framework.RequireCode(t, r, "the provider creating a widget in the consumer through its virtual workspace", 403)
	framework.RequireEqual(t, k.Run(t, "get", "widgets."+group, "-n", "default", "-o", "jsonpath={.items[*].metadata.name}"), "private", "the consumer's own widgets")
}
