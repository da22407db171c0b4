package launcher

import (
	"context"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

func TestEnsureRole(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := rbacv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c := fake.NewClientBuilder().WithScheme(scheme).Build()
	ctx := context.Background()
	sa := rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: "default", Name: "account-operator"}
	rules := []rbacv1.PolicyRule{{APIGroups: []string{"tenancy.kcp.io"}, Resources: []string{"workspacetypes"}, ResourceNames: []string{"org"}, Verbs: []string{"use"}}}
	for range 2 { // a restart changes nothing
		if err := ensureClusterRole(ctx, c, useRole, rules, sa); err != nil {
			t.Fatal(err)
		}
	}
	rules[0].ResourceNames = append(rules[0].ResourceNames, "account")
	if err := ensureClusterRole(ctx, c, useRole, rules, sa); err != nil {
		t.Fatal(err)
	}
	role := &rbacv1.ClusterRole{}
	if err := c.Get(ctx, client.ObjectKey{Name: useRole}, role); err != nil {
		t.Fatal(err)
	}
	if len(role.Rules) != 1 || len(role.Rules[0].ResourceNames) != 2 || role.Rules[0].Verbs[0] != "use" {
		t.Errorf("role rules %+v, want use on org and account", role.Rules)
	}
	binding := &rbacv1.ClusterRoleBinding{}
	if err := c.Get(ctx, client.ObjectKey{Name: useRole}, binding); err != nil {
		t.Fatal(err)
	}
	if len(binding.Subjects) != 1 || binding.Subjects[0] != sa || binding.RoleRef.Name != useRole {
		t.Errorf("binding %+v, want one subject %v on %s", binding, sa, useRole)
	}
}
