package sharing

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// widgetSizePolicy is a ValidatingAdmissionPolicy (and its binding) that
// refuses Widgets larger than max.
func widgetSizePolicy(max int) string {
	return fmt.Sprintf(`apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: widget-size
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - apiGroups: ["example.com"]
      apiVersions: ["*"]
      operations: ["CREATE", "UPDATE"]
      resources: ["widgets"]
  validations:
  - expression: "!has(object.spec.size) || object.spec.size <= %d"
    message: "widget larger than %d"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: widget-size
spec:
  policyName: widget-size
  validationActions: ["Deny"]
`, max, max)
}

func sizedWidget(name string, size int) string {
	return fmt.Sprintf("apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: %s\n  namespace: default\nspec: {size: %d}\n", name, size)
}

// TestExportAdmissionAcrossShards: a ValidatingAdmissionPolicy in the
// workspace of an APIExport on the root shard applies to the export's
// resources in a workspace on shard b that binds it, as in a workspace on
// the root shard (kcp's rule, on every shard); a change of the policy
// reaches shard b.
func TestExportAdmissionAcrossShards(t *testing.T) {
	sh := framework.StartShards(t)
	ps := sh.Via
	org := framework.CreatePinnedWorkspace(t, ps, "root", framework.UniqueName("adm"), "root")
	provider := framework.CreatePinnedWorkspace(t, ps, org.Path, "provider", "root")
	onRoot := framework.CreatePinnedWorkspace(t, ps, org.Path, "consumer-root", "root")
	onB := framework.CreatePinnedWorkspace(t, ps, org.Path, "consumer-b", "b")
	ps.ExportCRD(t, provider, widgetsCRD, "example.com")
	ps.KubectlFor(provider.Path).RunStdin(t, widgetSizePolicy(5), "apply", "-f", "-")
	ps.Bind(t, onRoot, "widgets", provider, "example.com", nil)
	ps.Bind(t, onB, "widgets", provider, "example.com", nil)

	// refused dry-runs a Widget of size in a consumer and reports whether
	// the export's policy refused it.
	refused := func(consumer framework.Workspace, size, max int) (bool, string) {
		out, errOut, err := ps.KubectlFor(consumer.Path).RunStdinErr(t, sizedWidget(framework.UniqueName("w"), size),
			"create", "--dry-run=server", "-f", "-")
		return err != nil && strings.Contains(errOut, fmt.Sprintf("widget larger than %d", max)), out + errOut
	}
	for _, c := range []framework.Workspace{onRoot, onB} {
		framework.Eventually(t, 30*time.Second, 250*time.Millisecond, "the export's policy to refuse a Widget in "+c.Path,
			func() (bool, string) { return refused(c, 10, 5) })
		// What the policy allows is created.
		ps.KubectlFor(c.Path).RunStdin(t, sizedWidget("small", 4), "create", "-f", "-")
	}

	// A tighter policy on root reaches shard b: its compiled form is
	// rebuilt from the replica.
	ps.KubectlFor(provider.Path).RunStdin(t, widgetSizePolicy(3), "apply", "-f", "-")
	framework.Eventually(t, 30*time.Second, 250*time.Millisecond, "the updated policy to refuse a Widget on shard b",
		func() (bool, string) { return refused(onB, 4, 3) })
	// An update on b is refused as well.
	_, errOut, err := ps.KubectlFor(onB.Path).RunErr(t, "-n", "default", "patch", "widget", "small", "--type=merge", "-p", `{"spec":{"size":9}}`)
	framework.RequireFails(t, "", errOut, err, "patching a Widget past the export's policy on shard b", "widget larger than 3")

	// Without the policy, shard b admits the Widget again.
	ps.KubectlFor(provider.Path).Run(t, "delete", "validatingadmissionpolicybinding", "widget-size")
	ps.KubectlFor(provider.Path).Run(t, "delete", "validatingadmissionpolicy", "widget-size")
	framework.Eventually(t, 30*time.Second, 250*time.Millisecond, "shard b to admit the Widget once the policy is gone", func() (bool, string) {
		out, errOut, err := ps.KubectlFor(onB.Path).RunStdinErr(t, sizedWidget(framework.UniqueName("w"), 10), "create", "--dry-run=server", "-f", "-")
		return err == nil, out + errOut
	})
}
