package apis

import (
	"fmt"
	"strings"
	"testing"
	"time"

	kcpcrypto "github.com/kcp-dev/apimachinery/v2/pkg/util/crypto"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// apisDefaultBindingName is kcp's name of a default APIBinding of export
// (at exportPath) in the workspace at path: <export>-<first 5 characters,
// lowercase, of the base62 SHA-224 of "<logical cluster>|<export path>|<export>">.
func apisDefaultBindingName(t *testing.T, s *framework.Server, path, exportPath, export string) string {
	t.Helper()
	cluster := strings.TrimSpace(s.KubectlFor(path).Run(t, "get", "logicalcluster", "cluster", "-o", "jsonpath={.metadata.annotations.kcp\\.io/cluster}"))
	return export + "-" + strings.ToLower(kcpcrypto.Base62Sha224.String(cluster + "|" + exportPath + "|" + export)[:5])
}

// TestDefaultAPIBindings creates a workspace of a type whose
// defaultAPIBindings name an export: the workspace becomes Ready with the
// binding Bound and the exported resource served.
func TestDefaultAPIBindings(t *testing.T) {
	t.Parallel()
	s := server(t)
	org := s.CreateOrg(t, "e2e-defaults")
	provider := s.CreateWorkspaces(t, org.Path, "provider")[0]
	s.ExportCRD(t, provider, apisCowboyCRD, apisCowboyExport)

	typeName := framework.UniqueName("cowboyland")
	wt := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "tenancy.kcp.io/v1alpha1", "kind": "WorkspaceType",
		"metadata": map[string]any{"name": typeName},
		"spec": map[string]any{
			"extend":             map[string]any{"with": []any{map[string]any{"name": "universal", "path": "root"}}},
			"defaultAPIBindings": []any{map[string]any{"path": provider.Path, "export": apisCowboyExport}},
		},
	}}
	typesGVR := schema.GroupVersionResource{Group: "tenancy.kcp.io", Version: "v1alpha1", Resource: "workspacetypes"}
	if _, err := s.Dynamic(t, org.Path).Resource(typesGVR).Create(framework.CallContext(t), wt, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating WorkspaceType %s: %v", typeName, err)
	}
	ws := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "tenancy.kcp.io/v1alpha1", "kind": "Workspace",
		"metadata": map[string]any{"name": "consumer"},
		"spec":     map[string]any{"type": map[string]any{"name": typeName, "path": org.Path}},
	}}
	if _, err := s.Dynamic(t, org.Path).Resource(framework.WorkspaceGVR).Create(framework.CallContext(t), ws, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating the workspace: %v", err)
	}
	consumer := framework.Workspace{Name: "consumer", Path: org.Path + ":consumer"}
	framework.Eventually(t, time.Minute, 250*time.Millisecond, "workspace "+consumer.Path+" to be Ready", func() (bool, string) {
		got, err := s.Dynamic(t, org.Path).Resource(framework.WorkspaceGVR).Get(framework.CallContext(t), "consumer", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		phase, _, _ := unstructured.NestedString(got.Object, "status", "phase")
		inits, _, _ := unstructured.NestedSlice(got.Object, "status", "initializers")
		return phase == "Ready", fmt.Sprintf("phase %q, initializers %v", phase, inits)
	})
	name := apisDefaultBindingName(t, s, consumer.Path, provider.Path, apisCowboyExport)
	b, err := s.Dynamic(t, consumer.Path).Resource(framework.APIBindingGVR).Get(framework.CallContext(t), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the default APIBinding %s is missing: %v", name, err)
	}
	if phase, _, _ := unstructured.NestedString(b.Object, "status", "phase"); phase != "Bound" {
		t.Errorf("default APIBinding phase = %q, want Bound (the workspace must not be Ready before)", phase)
	}
	apisEnsureNamespace(t, s, consumer.Path, "cows")
	apisCreateCowboy(t, s, consumer.Path, "cows", "first")
}

// TestDefaultAPIBindingClaimsAndWorkspacesThroughVW: a default APIBinding
// accepts every permission claim of its export (as kcp's apibinder
// initializer does), and a provider creates a Workspace in a consumer
// through the export's virtual workspace (the "use" check on the workspace
// type is decided in the type's workspace, not as a virtual workspace
// request).
func TestDefaultAPIBindingClaimsAndWorkspacesThroughVW(t *testing.T) {
	t.Parallel()
	s := server(t)
	org := s.CreateOrg(t, "e2e-defclaims")
	provider := s.CreateWorkspaces(t, org.Path, "provider")[0]
	pk := s.KubectlFor(provider.Path)
	pk.Run(t, "apply", "-f", framework.Apigen(t, apisCowboyCRD))
	pk.Run(t, "patch", "apiexport", apisCowboyExport, "--type=merge", "-p",
		`{"spec":{"permissionClaims":[{"group":"tenancy.kcp.io","resource":"workspaces","verbs":["*"]},{"group":"","resource":"namespaces","verbs":["get","list"]}]}}`)
	s.WaitExportIdentity(t, provider, apisCowboyExport)

	typeName := framework.UniqueName("claimland")
	s.KubectlFor(org.Path).RunStdin(t, fmt.Sprintf(`apiVersion: tenancy.kcp.io/v1alpha1
kind: WorkspaceType
metadata: {name: %s}
spec:
  extend: {with: [{name: universal, path: root}]}
  defaultChildWorkspaceType: {name: universal, path: root}
  defaultAPIBindings: [{path: %s, export: %s}]
`, typeName, provider.Path, apisCowboyExport), "create", "-f", "-")
	s.KubectlFor(org.Path).RunStdin(t, fmt.Sprintf(`apiVersion: tenancy.kcp.io/v1alpha1
kind: Workspace
metadata: {name: consumer}
spec: {type: {name: %s, path: %s}}
`, typeName, org.Path), "create", "-f", "-")
	framework.Eventually(t, time.Minute, 250*time.Millisecond, "workspace consumer to be Ready", func() (bool, string) {
		out, _, _ := s.KubectlFor(org.Path).RunErr(t, "get", "workspace", "consumer", "-o", "jsonpath={.status.phase}")
		return out == "Ready", out
	})
	consumer := org.Path + ":consumer"
	name := apisDefaultBindingName(t, s, consumer, provider.Path, apisCowboyExport)
	claims := s.KubectlFor(consumer).Run(t, "get", "apibinding", name, "-o", "jsonpath={.spec.permissionClaims}")
	for _, want := range []string{`"resource":"workspaces"`, `"resource":"namespaces"`, `"state":"Accepted"`, `"matchAll":true`} {
		if !strings.Contains(claims, want) {
			t.Errorf("the default APIBinding does not accept the export's claims (%s): %s", want, claims)
		}
	}

	vw := s.EndpointSliceURL(t, provider, apisCowboyExport)
	consumerCluster := strings.TrimSpace(s.KubectlFor(consumer).Run(t, "get", "logicalcluster", "cluster", "-o", "jsonpath={.metadata.annotations.kcp\\.io/cluster}"))
	through := &framework.Kubectl{Kubeconfig: s.Kubeconfig, GlobalArgs: []string{"--context", "shard-base", "--server", vw + "/clusters/" + consumerCluster}}
	framework.Eventually(t, 30*time.Second, 500*time.Millisecond, "a Workspace created through the virtual workspace", func() (bool, string) {
		out, errOut, err := through.RunStdinErr(t, `apiVersion: tenancy.kcp.io/v1alpha1
kind: Workspace
metadata: {name: child}
spec: {type: {name: universal, path: root}}
`, "create", "-f", "-")
		return err == nil || strings.Contains(errOut, "AlreadyExists"), out + errOut
	})
	s.KubectlFor(consumer).Run(t, "get", "workspace", "child")
}

// TestDefaultAPIBindingDefaultSelector: a default APIBinding accepts a
// claim with the defaultSelector the export gives it (kcp's apibinder
// initializer), and the workspace is Ready only once the claims are
// applied.
func TestDefaultAPIBindingDefaultSelector(t *testing.T) {
	t.Parallel()
	s := server(t)
	org := s.CreateOrg(t, "e2e-defselector")
	provider := s.CreateWorkspaces(t, org.Path, "provider")[0]
	pk := s.KubectlFor(provider.Path)
	pk.Run(t, "apply", "-f", framework.Apigen(t, apisCowboyCRD))
	pk.Run(t, "patch", "apiexport", apisCowboyExport, "--type=merge", "-p",
		`{"spec":{"permissionClaims":[{"group":"","resource":"configmaps","verbs":["get","list"],"defaultSelector":{"matchLabels":{"platform-mesh.io/enabled":"true"}}},{"group":"","resource":"secrets","verbs":["get"]}]}}`)
	s.WaitExportIdentity(t, provider, apisCowboyExport)

	typeName := framework.UniqueName("selectorland")
	s.KubectlFor(org.Path).RunStdin(t, fmt.Sprintf(`apiVersion: tenancy.kcp.io/v1alpha1
kind: WorkspaceType
metadata: {name: %s}
spec:
  extend: {with: [{name: universal, path: root}]}
  defaultAPIBindings: [{path: %s, export: %s}]
`, typeName, provider.Path, apisCowboyExport), "create", "-f", "-")
	s.KubectlFor(org.Path).RunStdin(t, fmt.Sprintf(`apiVersion: tenancy.kcp.io/v1alpha1
kind: Workspace
metadata: {name: consumer}
spec: {type: {name: %s, path: %s}}
`, typeName, org.Path), "create", "-f", "-")
	framework.Eventually(t, time.Minute, 250*time.Millisecond, "workspace consumer to be Ready", func() (bool, string) {
		out, _, _ := s.KubectlFor(org.Path).RunErr(t, "get", "workspace", "consumer", "-o", "jsonpath={.status.phase}")
		return out == "Ready", out
	})
	k := s.KubectlFor(org.Path + ":consumer")
	name := apisDefaultBindingName(t, s, org.Path+":consumer", provider.Path, apisCowboyExport)
	framework.RequireEqual(t, k.Run(t, "get", "apibinding", name, "-o",
		`jsonpath={.spec.permissionClaims[?(@.resource=="configmaps")].state} {.spec.permissionClaims[?(@.resource=="configmaps")].selector}`),
		`Accepted {"matchLabels":{"platform-mesh.io/enabled":"true"}}`, "the configmaps claim of the default APIBinding")
	framework.RequireEqual(t, k.Run(t, "get", "apibinding", name, "-o",
		`jsonpath={.spec.permissionClaims[?(@.resource=="secrets")].state} {.spec.permissionClaims[?(@.resource=="secrets")].selector}`),
		`Accepted {"matchAll":true}`, "the secrets claim (no default selector) of the default APIBinding")
	framework.RequireEqual(t, k.Run(t, "get", "apibinding", name, "-o", `jsonpath={.status.conditions[?(@.type=="PermissionClaimsApplied")].status}`),
		"True", "PermissionClaimsApplied of the default APIBinding once the workspace is Ready")
}

// TestDefaultAPIBindingAdoptsExisting: a workspace that already binds the
// export under another name (as an older server named default bindings,
// after the export) keeps that binding; the initializer creates no second
// one (which would be in NamingConflicts and keep the workspace from
// getting Ready).
func TestDefaultAPIBindingAdoptsExisting(t *testing.T) {
	t.Parallel()
	s := server(t)
	org := s.CreateOrg(t, "e2e-defadopt")
	provider := s.CreateWorkspaces(t, org.Path, "provider")[0]
	typeName := framework.UniqueName("adoptland")
	s.KubectlFor(org.Path).RunStdin(t, fmt.Sprintf(`apiVersion: tenancy.kcp.io/v1alpha1
kind: WorkspaceType
metadata: {name: %s}
spec:
  extend: {with: [{name: universal, path: root}]}
  defaultAPIBindings: [{path: %s, export: %s}]
---
apiVersion: tenancy.kcp.io/v1alpha1
kind: Workspace
metadata: {name: consumer}
spec: {type: {name: %s, path: %s}}
`, typeName, provider.Path, apisCowboyExport, typeName, org.Path), "create", "-f", "-")
	// The export does not exist yet: the initializer waits for it, and
	// the workspace gets the binding an older server made.
	consumer := org.Path + ":consumer"
	framework.Eventually(t, time.Minute, 250*time.Millisecond, "workspace consumer to be Initializing", func() (bool, string) {
		out, _, _ := s.KubectlFor(org.Path).RunErr(t, "get", "workspace", "consumer", "-o", "jsonpath={.status.phase}")
		return out == "Initializing", out
	})
	s.KubectlFor(consumer).RunStdin(t, fmt.Sprintf(`apiVersion: apis.kcp.io/v1alpha2
kind: APIBinding
metadata: {name: %s}
spec: {reference: {export: {path: %s, name: %s}}}
`, apisCowboyExport, provider.Path, apisCowboyExport), "create", "-f", "-")
	s.ExportCRD(t, provider, apisCowboyCRD, apisCowboyExport)
	framework.Eventually(t, time.Minute, 250*time.Millisecond, "workspace consumer to be Ready", func() (bool, string) {
		out, _, _ := s.KubectlFor(org.Path).RunErr(t, "get", "workspace", "consumer", "-o", "jsonpath={.status.phase}")
		return out == "Ready", out
	})
	framework.RequireEqual(t, s.KubectlFor(consumer).Run(t, "get", "apibindings", "-o", "jsonpath={.items[*].metadata.name}"),
		apisCowboyExport, "the APIBindings of the workspace")
}
