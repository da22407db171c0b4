package fidelity

import (
	"testing"
	"time"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// TestMaximalPermissionPolicy checks kcp's local maximal permission
// policy: with spec.maximalPermissionPolicy.local on the export, a
// consumer's admin may do with the bound resource only what RBAC in the
// provider's workspace grants the apis.kcp.io:binding:-prefixed user or
// groups; without the policy the consumer's RBAC alone decides.
func TestMaximalPermissionPolicy(t *testing.T) {
	t.Parallel()
	s := server(t)
	e := exportInNewOrg(t, s, "mpp", "levers", "Lever")
	org, provider, consumer, export := e.org, e.provider, e.consumer, e.export
	pk := s.KubectlFor(provider.Path)
	pk.Run(t, "patch", "apiexport", export, "--type=merge", "-p", `{"spec":{"maximalPermissionPolicy":{"local":{}}}}`)
	s.Bind(t, consumer, "levers", provider, export, nil)

	ck := s.KubectlFor(consumer.Path)
	ck.Run(t, "create", "clusterrolebinding", "bob-admin", "--clusterrole=cluster-admin", "--user=bob")
	for _, p := range []string{org.Path, consumer.Path} {
		s.KubectlFor(p).Run(t, "create", "clusterrolebinding", "bob-access", "--clusterrole=system:kcp:workspace:access", "--user=bob")
	}
	bob := s.KubectlAsUser(t, "bob", consumer.Path)
	lever := func(name string) string {
		return "apiVersion: mpp.example.com/v1\nkind: Lever\nmetadata: {name: " + name + ", namespace: default}\n"
	}
	ck.RunStdin(t, lever("by-admin"), "create", "-f", "-") // the shard admin (system:masters) is not bounded

	// No policy RBAC in the provider: the consumer's cluster-admin is refused.
	out, stderr, err := bob.RunStdinErr(t, lever("one"), "create", "-f", "-")
	framework.RequireFails(t, out, stderr, err, "bob creating a lever without the provider's policy allowing it", "forbidden")
	out, stderr, err = bob.RunErr(t, "get", "levers", "-n", "default")
	framework.RequireFails(t, out, stderr, err, "bob listing levers without the provider's policy allowing it", "forbidden")
	// Other resources in the consumer are not bounded.
	bob.Run(t, "get", "configmaps", "-n", "default")

	// The provider allows get, list and create to the prefixed user.
	pk.RunStdin(t, `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: levers-policy}
rules: [{apiGroups: [mpp.example.com], resources: [levers], verbs: [get, list, create]}]
`, "apply", "-f", "-")
	pk.Run(t, "create", "clusterrolebinding", "levers-policy", "--clusterrole=levers-policy", "--user=apis.kcp.io:binding:bob")
	framework.Eventually(t, 30*time.Second, 250*time.Millisecond, "bob to create a lever once the policy allows it", func() (bool, string) {
		out, stderr, err := bob.RunStdinErr(t, lever("one"), "create", "-f", "-")
		return err == nil, out + stderr
	})
	bob.Run(t, "get", "levers", "-n", "default", "one")
	out, stderr, err = bob.RunErr(t, "delete", "lever", "one", "-n", "default")
	framework.RequireFails(t, out, stderr, err, "bob deleting a lever (delete not in the provider's policy)", "forbidden")

	// A policy for a prefixed group works too.
	pk.RunStdin(t, `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: levers-delete}
rules: [{apiGroups: [mpp.example.com], resources: [levers], verbs: [delete]}]
`, "apply", "-f", "-")
	pk.Run(t, "create", "clusterrolebinding", "levers-delete", "--clusterrole=levers-delete", "--group=apis.kcp.io:binding:system:authenticated")
	framework.Eventually(t, 30*time.Second, 250*time.Millisecond, "bob to delete a lever once the group policy allows it", func() (bool, string) {
		out, stderr, err := bob.RunErr(t, "delete", "lever", "one", "-n", "default")
		return err == nil, out + stderr
	})

	// Without the policy, the consumer's RBAC alone decides.
	pk.Run(t, "patch", "apiexport", export, "--type=json", "-p", `[{"op":"remove","path":"/spec/maximalPermissionPolicy"}]`)
	pk.Run(t, "delete", "clusterrolebinding", "levers-policy", "levers-delete")
	framework.Eventually(t, 30*time.Second, 250*time.Millisecond, "bob to create a lever once the export has no policy", func() (bool, string) {
		out, stderr, err := bob.RunStdinErr(t, lever("two"), "create", "-f", "-")
		return err == nil, out + stderr
	})
}
