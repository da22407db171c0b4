package rbac

import (
	"fmt"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apiserver/pkg/authentication/user"
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

// The subject matcher finds the first subject naming one of the users, a
// group of one of them or a service account one of them is, without
// allocating.
func TestSubjectMatcher(t *testing.T) {
	m := newSubjectMatcher(
		&user.DefaultInfo{Name: "alice", Groups: []string{"dev", user.AllAuthenticated}},
		&user.DefaultInfo{Name: "system:serviceaccount:team:bot"},
		&user.DefaultInfo{Groups: []string{"ops"}}, // no name: matches no User subject ""
	)
	for _, tt := range []struct {
		subjects  []rbacv1.Subject
		namespace string
		want      int
	}{
		{[]rbacv1.Subject{{Kind: rbacv1.UserKind, Name: "bob"}, {Kind: rbacv1.UserKind, Name: "alice"}}, "", 1},
		{[]rbacv1.Subject{{Kind: rbacv1.UserKind, Name: ""}}, "", -1},
		{[]rbacv1.Subject{{Kind: rbacv1.GroupKind, Name: "ops"}}, "", 0},
		{[]rbacv1.Subject{{Kind: rbacv1.GroupKind, Name: "alice"}, {Kind: rbacv1.UserKind, Name: "dev"}}, "", -1},
		{[]rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: "team", Name: "bot"}}, "", 0},
		{[]rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "bot"}}, "team", 0},
		{[]rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "bot"}}, "", -1},
		{[]rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: "tea", Name: "m:bot"}}, "", -1},
		{[]rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: "team", Name: "bo"}}, "", -1},
		{[]rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: "team:bot", Name: ""}}, "", -1},
	} {
		if got := m.match(tt.subjects, tt.namespace); got != tt.want {
			t.Errorf("match(%+v, %q) = %d, want %d", tt.subjects, tt.namespace, got, tt.want)
		}
	}
	subjects := []rbacv1.Subject{{Kind: rbacv1.UserKind, Name: "x"}, {Kind: rbacv1.ServiceAccountKind, Name: "bot"}, {Kind: rbacv1.GroupKind, Name: "ops"}}
	if n := testing.AllocsPerRun(100, func() { _ = m.match(subjects, "team") }); n != 0 {
		t.Errorf("%v allocations per match, want 0", n)
	}
}
