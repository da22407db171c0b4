package fidelity

import (
	"fmt"
	"testing"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// TestBindNeedsOnlyBind checks kcp's binding authorization: a user with
// verb bind on apiexports/<name> in the provider's workspace may bind the
// export from a workspace of their own, without any access to the provider
// workspace; without bind the binding is refused.
func TestBindNeedsOnlyBind(t *testing.T) {
	t.Parallel()
	s := server(t)
	e := exportInNewOrg(t, s, "bind", "gadgets", "Gadget")
	org, provider, consumer, export := e.org, e.provider, e.consumer, e.export

	// bob: admin of the consumer, nothing in the org or the provider.
	admin := s.KubectlFor(consumer.Path)
	admin.Run(t, "create", "clusterrolebinding", "bob-admin", "--clusterrole=cluster-admin", "--user=bob")
	for _, p := range []string{org.Path, consumer.Path} {
		s.KubectlFor(p).Run(t, "create", "clusterrolebinding", "bob-access", "--clusterrole=system:kcp:workspace:access", "--user=bob")
	}
	bob := s.KubectlAsUser(t, "bob", consumer.Path)
	binding := fmt.Sprintf(`apiVersion: apis.kcp.io/v1alpha2
kind: APIBinding
metadata: {name: gadgets}
spec: {reference: {export: {path: %s, name: %s}}}
`, provider.Path, export)
	out, stderr, err := bob.RunStdinErr(t, binding, "create", "-f", "-")
	framework.RequireFails(t, out, stderr, err, "bob binding without bind on the export", "forbidden")

	pk := s.KubectlFor(provider.Path)
	pk.RunStdin(t, `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: bind-gadgets}
rules: [{apiGroups: [apis.kcp.io], resources: [apiexports], resourceNames: [`+export+`], verbs: [bind]}]
`, "apply", "-f", "-")
	pk.Run(t, "create", "clusterrolebinding", "bob-binds", "--clusterrole=bind-gadgets", "--user=bob")
	if _, _, err := s.KubectlAsUser(t, "bob", provider.Path).RunErr(t, "get", "configmaps", "-A"); err == nil {
		t.Fatalf("bob must have no access to the provider workspace for this test")
	}
	bob.RunStdin(t, binding, "create", "-f", "-")
	s.WaitBound(t, consumer, "gadgets", provider)
}
