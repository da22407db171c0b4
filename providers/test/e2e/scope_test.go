package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// saKubectl is kubectl with the token of a provider-kubeconfig
// --service-account kubeconfig, pointed at the core's base URL (each call
// names its --server).
func saKubectl(t *testing.T, kubeconfig string) (*framework.Kubectl, string) {
	t.Helper()
	k := &framework.Kubectl{Kubeconfig: kubeconfig}
	server := strings.TrimSpace(k.Run(t, "config", "view", "--minify", "-o", "jsonpath={.clusters[0].cluster.server}"))
	return k, server
}

// forbidden runs kubectl as the ServiceAccount in workspace and requires
// a Forbidden answer.
func forbidden(t *testing.T, k *framework.Kubectl, base, workspace, what string, args ...string) {
	t.Helper()
	out, errOut, err := k.RunErr(t, append([]string{"--server", base + "/clusters/" + workspace}, args...)...)
	if err == nil || !strings.Contains(strings.ToLower(errOut), "forbidden") {
		t.Errorf("the provider's ServiceAccount %s in %s: want Forbidden, got err=%v\n%s%s", what, workspace, err, out, errOut)
	}
}

// TestProviderServiceAccountHasTheExportContentOnly plays a provider whose
// token leaks, or a provider that turns on its platform (issue 28):
// `provider-kubeconfig --service-account` gives the export's content and
// nothing else. Directly in the provider workspace the token reads no
// Secret (the export's identity key among them), deletes no WorkspaceType
// and no Namespace, even dry-run, and touches none of the exported or
// claimed resources; through the export's virtual workspace it still
// reads and writes the exported resources and the accepted claims.
func TestProviderServiceAccountHasTheExportContentOnly(t *testing.T) {
	s := platform(t)
	if s.External {
		t.Skip("creates workspaces and ServiceAccounts of its own")
	}
	base := s.BaseURL

	// The platform's own export, core.platform-mesh.io in
	// root:platform-mesh-system, claims namespaces, workspaces and
	// workspacetypes with every verb.
	const platformWS = "root:platform-mesh-system"
	kc, _, err := providerKubeconfig(t, s, "--service-account", framework.UniqueName("scoped"))
	if err != nil {
		t.Fatal(err)
	}
	sa, vw := saKubectl(t, kc)
	types := strings.Fields(s.KubectlFor(platformWS).Run(t, "get", "workspacetypes", "-o", "jsonpath={.items[*].metadata.name}"))
	if len(types) == 0 {
		t.Fatalf("no WorkspaceType in %s to aim at", platformWS)
	}
	forbidden(t, sa, base, platformWS, "deleting a WorkspaceType (dry-run)", "delete", "workspacetype", types[0], "--dry-run=server")
	forbidden(t, sa, base, platformWS, "deleting namespace kcp-system (dry-run)", "delete", "namespace", "kcp-system", "--dry-run=server")
	forbidden(t, sa, base, platformWS, "listing namespaces", "get", "namespaces")
	forbidden(t, sa, base, platformWS, "listing Workspaces", "get", "workspaces")
	forbidden(t, sa, base, platformWS, "listing secrets", "get", "secrets", "-A")
	forbidden(t, sa, base, platformWS, "listing APIBindings", "get", "apibindings")
	// What it needs there: its endpoint slice and export.
	sa.Run(t, "--server", base+"/clusters/"+platformWS, "get", "apiexportendpointslice", slice)
	sa.Run(t, "--server", base+"/clusters/"+platformWS, "get", "apiexport", "core.platform-mesh.io")
	// And the export's content across consumers.
	name := framework.UniqueName("scope")
	createAccount(t, s, "root:orgs", name)
	framework.Eventually(t, 30*time.Second, 500*time.Millisecond, "the ServiceAccount to read accounts through the virtual workspace", func() (bool, string) {
		out, errOut, err := sa.RunErr(t, "--server", vw+"/clusters/*", "get", "accounts", "-o", "name")
		return err == nil && strings.Contains(out, name), out + errOut
	})

	// An export that claims secrets, as the mongodb example's: its
	// provider workspace holds the export's identity key, a Secret.
	provider := s.CreateOrg(t, "scopeprov")
	group := "scope.providers.meshplane.io"
	s.ExportCRD(t, provider, framework.SchemalessCRD(group, "widgets", "Widget"), group)
	inProvider := s.KubectlFor(provider.Path)
	inProvider.Run(t, "patch", "apiexport", group, "--type=merge", "-p",
		`{"spec":{"permissionClaims":[{"group":"","resource":"secrets","verbs":["get","list","create"]}]}}`)
	inProvider.Run(t, "create", "secret", "generic", "provider-private", "-n", "default", "--from-literal=k=v")
	identity := inProvider.Run(t, "get", "apiexport", group, "-o", "jsonpath={.spec.identity.secretRef.namespace}/{.spec.identity.secretRef.name}")
	consumer := s.CreateOrg(t, "scopecons")
	s.Bind(t, consumer, "widgets", provider, group, []any{map[string]any{"group": "", "resource": "secrets", "verbs": []any{"get", "list", "create"},
		"selector": map[string]any{"matchAll": true}, "state": "Accepted"}})
	s.KubectlFor(consumer.Path).Run(t, "create", "secret", "generic", "consumer-secret", "-n", "default", "--from-literal=k=v")

	kc, _, err = providerKubeconfig(t, s, "--workspace", provider.Path, "--endpoint-slice", group, "--service-account", "widgets-provider")
	if err != nil {
		t.Fatal(err)
	}
	sa, vw = saKubectl(t, kc)
	ns, secret, _ := strings.Cut(identity, "/")
	if secret == "" {
		t.Fatalf("APIExport %s has no identity secret reference: %q", group, identity)
	}
	forbidden(t, sa, base, provider.Path, "reading the export's identity key "+identity, "get", "secret", secret, "-n", ns)
	forbidden(t, sa, base, provider.Path, "listing secrets", "get", "secrets", "-A")
	forbidden(t, sa, base, provider.Path, "reading a Secret of the provider", "get", "secret", "provider-private", "-n", "default")
	forbidden(t, sa, base, provider.Path, "creating a Secret (dry-run)", "create", "secret", "generic", "x", "-n", "default", "--dry-run=server")
	// The claim still works where the consumer accepted it: through the
	// virtual workspace.
	framework.Eventually(t, 30*time.Second, 500*time.Millisecond, "the ServiceAccount to read the consumer's Secret through the claim", func() (bool, string) {
		out, errOut, err := sa.RunErr(t, "--server", vw+"/clusters/"+consumer.Cluster, "get", "secret", "consumer-secret", "-n", "default", "-o", "name")
		return err == nil && strings.Contains(out, "consumer-secret"), out + errOut
	})
	sa.RunStdin(t, "apiVersion: "+group+"/v1\nkind: Widget\nmetadata: {name: w, namespace: default}\n", "--server", vw+"/clusters/"+consumer.Cluster, "create", "-f", "-")
}
