package fidelity

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// claimsExport is an APIExport with two permission claims: one in the core
// group (group omitted) and one in a named group.
const claimsExport = `apiVersion: apis.kcp.io/v1alpha2
kind: APIExport
metadata:
  name: claims
spec:
  permissionClaims:
  - resource: configmaps
    verbs: ["get", "list"]
  - group: rbac.authorization.k8s.io
    resource: roles
    verbs: ["*"]
`

// claimsBinding binds claimsExport of %s and accepts both claims; the
// core group is spelled %s.
const claimsBinding = `apiVersion: apis.kcp.io/v1alpha2
kind: APIBinding
metadata:
  name: claims
spec:
  reference:
    export:
      path: %s
      name: claims
  permissionClaims:
  - %sresource: configmaps
    verbs: ["get", "list"]
    selector: {matchAll: true}
    state: Accepted
  - group: rbac.authorization.k8s.io
    resource: roles
    verbs: ["*"]
    selector: {matchAll: true}
    state: Accepted
`

// wantClaims are the claims of both objects, as "group/resource".
var wantClaims = []string{"/configmaps", "rbac.authorization.k8s.io/roles"}

// TestServerSideApplyKeepsPermissionClaims applies an APIExport and an
// APIBinding with permission claims server-side, twice, as `kubectl apply
// --server-side` does and as controllers do, and checks that the claims
// stay what was applied: neither misread (group = resource) nor duplicated
// (a claim with group "" and the same claim with the group omitted).
func TestServerSideApplyKeepsPermissionClaims(t *testing.T) {
	t.Parallel()
	s := server(t)
	org := s.CreateOrg(t, "ssa")
	ws := s.CreateWorkspaces(t, org.Path, "provider", "consumer")
	provider, consumer := ws[0], ws[1]

	kp := s.KubectlFor(provider.Path)
	for i := 0; i < 2; i++ {
		kp.RunStdin(t, claimsExport, "apply", "--server-side", "-f", "-")
		requireClaims(t, s, provider.Path, framework.APIExportGVR.Resource, "claims", fmt.Sprintf("APIExport after server-side apply #%d", i+1))
	}
	// A second field manager applying the same claims shares them.
	kp.RunStdin(t, strings.Replace(claimsExport, "- resource: configmaps", "- group: \"\"\n    resource: configmaps", 1),
		"apply", "--server-side", "--field-manager", "other-controller", "-f", "-")
	requireClaims(t, s, provider.Path, framework.APIExportGVR.Resource, "claims", "APIExport after an apply by a second manager with group \"\"")
	// Applying the same again writes nothing (a key spelled at its default
	// is no change).
	rv := func() string {
		return kp.Run(t, "get", "apiexport", "claims", "-o", "jsonpath={.metadata.resourceVersion}")
	}
	s.WaitExportIdentity(t, provider, "claims") // the controller's last write
	before := rv()
	kp.RunStdin(t, strings.Replace(claimsExport, "- resource: configmaps", "- group: \"\"\n    resource: configmaps", 1),
		"apply", "--server-side", "--field-manager", "other-controller", "-f", "-")
	framework.RequireEqual(t, rv(), before, "resourceVersion of the APIExport after applying the same claims again")

	kc := s.KubectlFor(consumer.Path)
	for i, group := range []string{"", "group: \"\"\n    ", ""} {
		kc.RunStdin(t, fmt.Sprintf(claimsBinding, provider.Path, group), "apply", "--server-side", "-f", "-")
		requireClaims(t, s, consumer.Path, framework.APIBindingGVR.Resource, "claims", fmt.Sprintf("APIBinding after server-side apply #%d", i+1))
	}
	// A controller's apply through client-go, with a field manager of its own.
	obj := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(fmt.Sprintf(claimsBinding, provider.Path, "")), &obj.Object); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Dynamic(t, consumer.Path).Resource(framework.APIBindingGVR).Apply(framework.CallContext(t), "claims", obj,
		metav1.ApplyOptions{FieldManager: "some-controller", Force: true}); err != nil {
		t.Fatalf("applying the APIBinding with client-go: %v", err)
	}
	requireClaims(t, s, consumer.Path, framework.APIBindingGVR.Resource, "claims", "APIBinding after a client-go apply")
}

// requireClaims checks spec.permissionClaims of an object are wantClaims.
func requireClaims(t *testing.T, s *framework.Server, cluster, resource, name, what string) {
	t.Helper()
	out := s.KubectlFor(cluster).Run(t, "get", resource, name, "-o", "json")
	var obj struct {
		Spec struct {
			PermissionClaims []struct {
				Group    string `json:"group"`
				Resource string `json:"resource"`
				State    string `json:"state"`
			} `json:"permissionClaims"`
		} `json:"spec"`
	}
	if err := json.Unmarshal([]byte(out), &obj); err != nil {
		t.Fatalf("%s: decoding: %v", what, err)
	}
	var got []string
	for _, c := range obj.Spec.PermissionClaims {
		got = append(got, c.Group+"/"+c.Resource)
		if resource == framework.APIBindingGVR.Resource && c.State != "Accepted" {
			t.Errorf("%s: claim %s/%s has state %q, want Accepted", what, c.Group, c.Resource, c.State)
		}
	}
	sort.Strings(got)
	if strings.Join(got, ",") != strings.Join(wantClaims, ",") {
		t.Fatalf("%s: spec.permissionClaims are %v, want %v", what, got, wantClaims)
	}
}
