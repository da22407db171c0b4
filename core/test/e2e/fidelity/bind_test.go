package fidelity

import (
	"fmt"
	"strings"
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

// TestBindThroughClusterGroup checks kcp's cross-workspace identities (its
// e2e TestServiceAccount): a ServiceAccount of the consumer is, in the
// provider's workspace, anonymous in groups system:authenticated and
// system:cluster:<consumer cluster>; bind granted to that group lets it
// bind the export. Another workspace's ServiceAccount is not in the group.
func TestBindThroughClusterGroup(t *testing.T) {
	t.Parallel()
	s := server(t)
	e := exportInNewOrg(t, s, "clustergroup", "gadgets", "Gadget")
	other := s.CreateWorkspaces(t, e.org.Path, "other")[0]
	binding := fmt.Sprintf(`apiVersion: apis.kcp.io/v1alpha2
kind: APIBinding
metadata: {name: gadgets}
spec: {reference: {export: {path: %s, name: %s}}}
`, e.provider.Path, e.export)
	saKubectl := func(ws framework.Workspace) *framework.Kubectl {
		k := s.KubectlFor(ws.Path)
		k.Run(t, "create", "serviceaccount", "binder", "-n", "default")
		k.Run(t, "create", "clusterrolebinding", "binder-admin", "--clusterrole=cluster-admin", "--serviceaccount=default:binder")
		token := strings.TrimSpace(k.Run(t, "create", "token", "binder", "-n", "default"))
		return &framework.Kubectl{Kubeconfig: s.Kubeconfig, CacheDir: t.TempDir(),
			GlobalArgs: []string{"--context", "shard-base", "--server", s.ClusterURL(ws.Path), "--token", token}}
	}
	consumerSA, otherSA := saKubectl(e.consumer), saKubectl(other)

	out, stderr, err := consumerSA.RunStdinErr(t, binding, "create", "-f", "-")
	framework.RequireFails(t, out, stderr, err, "the consumer's ServiceAccount binding without bind", "forbidden")

	pk := s.KubectlFor(e.provider.Path)
	pk.RunStdin(t, `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: bind-gadgets}
rules: [{apiGroups: [apis.kcp.io], resources: [apiexports], resourceNames: [`+e.export+`], verbs: [bind]}]
`, "apply", "-f", "-")
	pk.Run(t, "create", "clusterrolebinding", "consumer-binds", "--clusterrole=bind-gadgets", "--group=system:cluster:"+e.consumer.Cluster)

	out, stderr, err = otherSA.RunStdinErr(t, binding, "create", "-f", "-")
	framework.RequireFails(t, out, stderr, err, "another workspace's ServiceAccount binding through the consumer's group", "forbidden")
	consumerSA.RunStdin(t, binding, "create", "-f", "-")
	s.WaitBound(t, e.consumer, "gadgets", e.provider)
}
