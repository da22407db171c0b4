package rbac

import (
	"fmt"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
)

// The Allow reason reads as kube's RBAC authorizer words it (what the
// core wrote with fmt before), in at most three allocations.
func TestAllowedReasonWording(t *testing.T) {
	for _, g := range []grant{
		{bindingKind: "ClusterRoleBinding", bindingName: "admins", roleKind: "ClusterRole", roleName: "cluster-admin",
			subject: rbacv1.Subject{Kind: rbacv1.GroupKind, Name: "system:masters"}},
		{bindingKind: "RoleBinding", bindingNamespace: "team", bindingName: "edit \"quoted\"", roleKind: "Role", roleName: "editor",
			subject: rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: "team", Name: "bot"}},
		{bindingKind: "RoleBinding", bindingNamespace: "ns", bindingName: "ünï", roleKind: "ClusterRole", roleName: "view",
			subject: rbacv1.Subject{Kind: rbacv1.UserKind, Name: "a\tb"}},
	} {
		binding := fmt.Sprintf("%s %q", g.bindingKind, g.bindingName)
		if g.bindingNamespace != "" {
			binding = fmt.Sprintf("%s %q", g.bindingKind, g.bindingNamespace+"/"+g.bindingName)
		}
		by := fmt.Sprintf("%s of %s %q to %s %q", binding, g.roleKind, g.roleName, g.subject.Kind, subjectName(g.subject))
		want := fmt.Sprintf("RBAC: allowed by %s in logical cluster %q", by, "root:org")
		if got := g.allowedReason("root:org"); got != want {
			t.Errorf("reason\n %s\nwant\n %s", got, want)
		}
		if n := testing.AllocsPerRun(100, func() { _ = g.allowedReason("root:org") }); n > 3 {
			t.Errorf("%v allocations per reason, want at most 3", n)
		}
	}
}
