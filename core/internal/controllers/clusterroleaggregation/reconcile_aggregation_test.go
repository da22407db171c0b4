package clusterroleaggregation

import (
	"context"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestAggregationReconciler(t *testing.T) {
	sel := &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{{MatchLabels: map[string]string{"agg": "monitoring"}}}}
	read := rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get"}}
	list := rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"list"}}
	role := func(name string, labels map[string]string, rules ...rbacv1.PolicyRule) *rbacv1.ClusterRole {
		return &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Rules: rules}
	}
	aggregated := func(rules ...rbacv1.PolicyRule) *rbacv1.ClusterRole {
		r := role("monitoring", nil, rules...)
		r.AggregationRule = sel
		return r
	}
	match := map[string]string{"agg": "monitoring"}
	for _, tt := range []struct {
		name       string
		role       *rbacv1.ClusterRole
		others     []*rbacv1.ClusterRole
		wantUpdate bool
		wantRules  []rbacv1.PolicyRule
	}{
		{"matching roles aggregated in name order, each rule once", aggregated(),
			[]*rbacv1.ClusterRole{role("b", match, list, read), role("a", match, read), role("c", map[string]string{"agg": "other"}, list)},
			true, []rbacv1.PolicyRule{read, list}},
		{"already aggregated: no write", aggregated(read), []*rbacv1.ClusterRole{role("a", match, read)}, false, nil},
		{"a role no longer matching: its rules go", aggregated(read, list), []*rbacv1.ClusterRole{role("a", match, read)}, true, []rbacv1.PolicyRule{read}},
		{"nothing matches: no rules", aggregated(read), nil, true, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var updated *rbacv1.ClusterRole
			r := &aggregationReconciler{
				list: func(cluster string) []*rbacv1.ClusterRole {
					if cluster != "c1" {
						t.Errorf("listed cluster %s, want c1 (only the role's own cluster)", cluster)
					}
					return append(tt.others, tt.role)
				},
				update: func(_ context.Context, _ string, r *rbacv1.ClusterRole) error { updated = r; return nil },
			}
			if err := r.reconcile(context.Background(), "c1", tt.role); err != nil {
				t.Fatal(err)
			}
			if (updated != nil) != tt.wantUpdate {
				t.Fatalf("updated = %v, want %v", updated != nil, tt.wantUpdate)
			}
			if updated != nil {
				if len(updated.Rules) != len(tt.wantRules) {
					t.Fatalf("rules = %v, want %v", updated.Rules, tt.wantRules)
				}
				for i := range tt.wantRules {
					if updated.Rules[i].Resources[0] != tt.wantRules[i].Resources[0] {
						t.Errorf("rule %d = %v, want %v", i, updated.Rules[i], tt.wantRules[i])
					}
				}
			}
		})
	}
}
