package fidelity

import (
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// TestAPIExportIdentityVerification checks kcp's handling of an identity
// secret that does not exist yet: IdentityValid False with reason
// IdentityVerificationFailed; once the secret appears the export is
// verified, its identity hash the hex sha256 of the key (kcp's e2e test
// expects this very hash for key abcd1234).
func TestAPIExportIdentityVerification(t *testing.T) {
	t.Parallel()
	s := server(t)
	org := s.CreateOrg(t, "identity")
	ws := s.CreateWorkspaces(t, org.Path, "provider")[0]
	k := s.KubectlFor(ws.Path)
	k.RunStdin(t, `apiVersion: apis.kcp.io/v1alpha2
kind: APIExport
metadata: {name: my-export}
spec: {identity: {secretRef: {namespace: default, name: identity1}}}
`, "create", "-f", "-")
	exports := s.Dynamic(t, ws.Path).Resource(framework.APIExportGVR)
	condition := func() (map[string]any, *unstructured.Unstructured, string) {
		e, err := exports.Get(framework.CallContext(t), "my-export", metav1.GetOptions{})
		if err != nil {
			return nil, nil, err.Error()
		}
		c, _ := framework.Condition(e, "IdentityValid")
		return c, e, framework.Compact(e.Object["status"])
	}
	framework.Eventually(t, 30*time.Second, 250*time.Millisecond, "IdentityValid False with reason IdentityVerificationFailed", func() (bool, string) {
		c, _, why := condition()
		return c["status"] == "False" && c["reason"] == "IdentityVerificationFailed", why
	})
	k.Run(t, "create", "secret", "generic", "identity1", "-n", "default", "--from-literal=key=abcd1234")
	framework.Eventually(t, 30*time.Second, 250*time.Millisecond, "IdentityValid True once the secret exists", func() (bool, string) {
		c, _, why := condition()
		return c["status"] == "True", why
	})
	_, e, _ := condition()
	hash, _, _ := unstructured.NestedString(e.Object, "status", "identityHash")
	framework.RequireEqual(t, hash, "e9cee71ab932fde863338d08be4de9dfe39ea049bdafb342ce659ec5450b69ae", "status.identityHash for key abcd1234")
}

// TestAPIExportEndpointSliceChecks checks kcp's rules for
// APIExportEndpointSlices: creating one needs verb bind on the export
// (refused with kcp's message otherwise, also for an export that does not
// exist, even for system:masters), and a slice naming a Partition that does not exist gets
// PartitionValid False (PartitionInvalidReference) and no endpoints.
func TestAPIExportEndpointSliceChecks(t *testing.T) {
	t.Parallel()
	s := server(t)
	org := s.CreateOrg(t, "slices")
	ws := s.CreateWorkspaces(t, org.Path, "provider", "consumer", "other")
	provider, consumer, other := ws[0], ws[1], ws[2]
	s.ExportCRD(t, provider, gadgetsCRD, "bind.example.com")
	s.Bind(t, consumer, "gadgets", provider, "bind.example.com", nil)

	s.KubectlFor(other.Path).Run(t, "create", "clusterrolebinding", "bob-admin", "--clusterrole=cluster-admin", "--user=bob")
	for _, p := range []string{org.Path, other.Path} {
		s.KubectlFor(p).Run(t, "create", "clusterrolebinding", "bob-access", "--clusterrole=system:kcp:workspace:access", "--user=bob")
	}
	slice := func(name, path, export, partition string) string {
		out := fmt.Sprintf("apiVersion: apis.kcp.io/v1alpha1\nkind: APIExportEndpointSlice\nmetadata: {name: %s}\nspec:\n  export: {path: %s, name: %s}\n", name, path, export)
		if partition != "" {
			out += "  partition: " + partition + "\n"
		}
		return out
	}
	bob := s.KubectlAsUser(t, "bob", other.Path)
	out, stderr, err := bob.RunStdinErr(t, slice("gadgets", provider.Path, "bind.example.com", ""), "create", "-f", "-")
	framework.RequireFails(t, out, stderr, err, "bob creating an endpoint slice of an export he may not bind",
		"unable to create APIExportEndpointSlice: no permission to bind to export "+provider.Path+":bind.example.com")
	out, stderr, err = bob.RunStdinErr(t, slice("nothing", provider.Path, "missing", ""), "create", "-f", "-")
	framework.RequireFails(t, out, stderr, err, "bob creating an endpoint slice of an export that does not exist",
		"unable to create APIExportEndpointSlice: no permission to bind to export "+provider.Path+":missing")

	// An export looked up by path must exist, whoever asks (kcp looks it
	// up before the bind check).
	ok := s.KubectlFor(other.Path)
	out, stderr, err = ok.RunStdinErr(t, slice("missing", provider.Path, "missing", ""), "create", "-f", "-")
	framework.RequireFails(t, out, stderr, err, "system:masters creating an endpoint slice of an export that does not exist",
		"unable to create APIExportEndpointSlice: no permission to bind to export "+provider.Path+":missing")
	ok.RunStdin(t, slice("partitioned", provider.Path, "bind.example.com", "eu"), "create", "-f", "-")
	slices := s.Dynamic(t, other.Path).Resource(framework.EndpointSliceGVR)
	framework.Eventually(t, 30*time.Second, 250*time.Millisecond, "PartitionValid False on the slice naming a missing partition", func() (bool, string) {
		got, err := slices.Get(framework.CallContext(t), "partitioned", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		c, _ := framework.Condition(got, "PartitionValid")
		eps, _, _ := unstructured.NestedSlice(got.Object, "status", "endpoints")
		return c["status"] == "False" && c["reason"] == "PartitionInvalidReference" && len(eps) == 0, framework.Compact(got.Object["status"])
	})
}
