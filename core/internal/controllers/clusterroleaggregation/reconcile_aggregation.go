package clusterroleaggregation

import (
	"context"
	"sort"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/klog/v2"
)

// aggregationReconciler sets an aggregated ClusterRole's rules to the
// union of the rules of the other ClusterRoles of its cluster that one of
// its selectors matches, roles in name order, each rule once.
type aggregationReconciler struct {
	// list returns the ClusterRoles of one cluster.
	list   func(cluster string) []*rbacv1.ClusterRole
	update func(ctx context.Context, cluster string, r *rbacv1.ClusterRole) error
}

func (r *aggregationReconciler) reconcile(ctx context.Context, cluster string, role *rbacv1.ClusterRole) error {
	var selectors []labels.Selector
	for i := range role.AggregationRule.ClusterRoleSelectors {
		s, err := metav1.LabelSelectorAsSelector(&role.AggregationRule.ClusterRoleSelectors[i])
		if err != nil {
			// A bad selector cannot be fixed by retrying.
			klog.FromContext(ctx).Error(err, "Ignoring an invalid clusterRoleSelector")
			continue
		}
		selectors = append(selectors, s)
	}
	roles := r.list(cluster)
	sort.Slice(roles, func(i, j int) bool { return roles[i].Name < roles[j].Name })
	var rules []rbacv1.PolicyRule
	for _, other := range roles {
		if other.Name == role.Name || !matchesAny(selectors, labels.Set(other.Labels)) {
			continue
		}
		for _, rule := range other.Rules {
			if !contains(rules, rule) {
				rules = append(rules, rule)
			}
		}
	}
	if equality.Semantic.DeepEqual(role.Rules, rules) {
		return nil
	}
	role = role.DeepCopy()
	role.Rules = rules
	klog.FromContext(ctx).V(2).Info("Aggregating ClusterRole rules", "rules", len(rules))
	return r.update(ctx, cluster, role)
}

func matchesAny(selectors []labels.Selector, l labels.Set) bool {
	for _, s := range selectors {
		if !s.Empty() && s.Matches(l) {
			return true
		}
	}
	return false
}

func contains(rules []rbacv1.PolicyRule, rule rbacv1.PolicyRule) bool {
	for _, r := range rules {
		if equality.Semantic.DeepEqual(r, rule) {
			return true
		}
	}
	return false
}
