package fidelity

import (
	"fmt"
	"strings"
	"testing"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// TestAPIBindingValidation checks two APIBinding behaviours kcp's clients
// rely on: accepting a claim the export does not make (here one naming an
// identity hash no export has) makes PermissionClaimsValid False with
// reason InvalidPermissionClaims, and the export reference cannot change,
// with kcp's message.
func TestAPIBindingValidation(t *testing.T) {
	t.Parallel()
	s := server(t)
	org := s.CreateOrg(t, "bindingvalid")
	ws := s.CreateWorkspaces(t, org.Path, "provider", "consumer")
	provider, consumer := ws[0], ws[1]
	s.KubectlFor(provider.Path).RunStdin(t, claimsExport, "apply", "-f", "-")

	bogus := strings.Repeat("0f", 32)
	binding := fmt.Sprintf(claimsBinding, provider.Path, "") + fmt.Sprintf(`  - group: wildwest.dev
    resource: cowboys
    identityHash: %s
    verbs: ["*"]
    selector: {matchAll: true}
    state: Accepted
`, bogus)
	k := s.KubectlFor(consumer.Path)
	k.RunStdin(t, binding, "apply", "-f", "-")
	k.Run(t, "wait", "--for=condition=PermissionClaimsValid=false", "--timeout=60s", "apibinding/claims")
	reason := k.Run(t, "get", "apibinding", "claims", "-o", `jsonpath={.status.conditions[?(@.type=="PermissionClaimsValid")].reason}`)
	framework.RequireEqual(t, reason, "InvalidPermissionClaims", "reason of PermissionClaimsValid")
	msg := k.Run(t, "get", "apibinding", "claims", "-o", `jsonpath={.status.conditions[?(@.type=="PermissionClaimsValid")].message}`)
	framework.RequireContains(t, msg, `unexpected/invalid claim for cowboys.wildwest.dev (identity "`+bogus+`")`, "message of PermissionClaimsValid")

	out, stderr, err := k.RunErr(t, "patch", "apibinding", "claims", "--type=merge", "-p", `{"spec":{"reference":{"export":{"name":"other"}}}}`)
	framework.RequireFails(t, out, stderr, err, "changing the export reference", "spec.reference", "APIExport reference must not be changed")
}
