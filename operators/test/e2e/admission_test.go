package e2e

import (
	"strings"
	"testing"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// TestAccountAdmission checks the admission policies the bootstrap puts
// into root:platform-mesh-system: they apply to Accounts in the consumer
// workspace root:orgs, set spec.creator to the requesting user, keep it
// immutable, and refuse short organization names and reserved names.
func TestAccountAdmission(t *testing.T) {
	s := platform(t)
	bob := s.KubectlAsUser(t, "bob", "root:orgs")
	admin := s.KubectlFor("root:orgs")
	name := framework.UniqueName("adm")

	// bob claims alice created it; the policy records bob.
	bob.RunStdin(t, accountYAML(name, "org", "alice"), "create", "-f", "-")
	t.Cleanup(func() { _, _, _ = admin.RunErr(t, "delete", "account", name, "--wait=false") })
	if creator, err := jsonpath(t, admin, "{.spec.creator}", "get", "account", name); err != nil || creator != "bob" {
		t.Errorf("spec.creator of bob's Account = %q (err %v), want bob", creator, err)
	}
	_, errOut, err := admin.RunErr(t, "patch", "account", name, "--type=merge", "-p", `{"spec":{"creator":"mallory"}}`)
	if err == nil || !strings.Contains(errOut, "spec.creator is immutable") {
		t.Errorf("changing spec.creator: err %v, stderr %q; want it refused as immutable", err, errOut)
	}

	for _, tc := range []struct{ name, typ, want string }{
		{"ab", "org", "organization name ab is too short: at least 3 characters"},
		{"admin", "org", "account name admin is reserved"},
		{"www", "org", "account name www is reserved"},
	} {
		_, errOut, err := bob.RunStdinErr(t, accountYAML(tc.name, tc.typ, "bob"), "create", "-f", "-")
		if err == nil || !strings.Contains(errOut, tc.want) {
			t.Errorf("creating %s Account %q: err %v, stderr %q; want it refused with %q", tc.typ, tc.name, err, errOut, tc.want)
		}
	}
}
