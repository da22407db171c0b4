// Package clusterroleaggregation fills the rules of aggregated
// ClusterRoles (those with an aggregationRule) from the ClusterRoles their
// label selectors match, in the same logical cluster only, as
// kube-controller-manager's clusterrole-aggregation controller does for
// one cluster. One controller serves all clusters from a cluster-aware
// wildcard informer.
//
// Reconcile steps for an aggregated ClusterRole (one file each):
//  1. reconcile_aggregation.go: rules = the union of the matching roles'
//     rules, in name order.
package clusterroleaggregation

import (
	"context"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/client-go/tools/cache"

	kcpcache "github.com/kcp-dev/apimachinery/v2/pkg/cache"

	"github.com/meshplane/meshplane/core/internal/reconciler/client"
	"github.com/meshplane/meshplane/core/internal/reconciler/runner"
)

// Controller reconciles aggregated ClusterRoles.
type Controller struct {
	informer    cache.SharedIndexInformer
	aggregation *aggregationReconciler
}

// New returns the controller; the informer follows ClusterRoles in every
// cluster and is run by the caller.
func New(roles client.Client[*rbacv1.ClusterRole], informer cache.SharedIndexInformer) *Controller {
	// An index by cluster, so one role's change looks at its cluster's
	// roles only (an error means the index is there already).
	_ = informer.AddIndexers(cache.Indexers{kcpcache.ClusterIndexName: kcpcache.ClusterIndexFunc})
	c := &Controller{informer: informer}
	c.aggregation = &aggregationReconciler{
		list: c.rolesOf,
		update: func(ctx context.Context, cluster string, r *rbacv1.ClusterRole) error {
			_, err := roles.Update(ctx, cluster, "", r.Name, r)
			return err
		},
	}
	return c
}

// rolesOf lists a cluster's ClusterRoles from the informer.
func (c *Controller) rolesOf(cluster string) []*rbacv1.ClusterRole {
	objs, err := c.informer.GetIndexer().ByIndex(kcpcache.ClusterIndexName, cluster) // the index key is the cluster name
	if err != nil {
		return nil
	}
	out := make([]*rbacv1.ClusterRole, 0, len(objs))
	for _, o := range objs {
		if r, ok := o.(*rbacv1.ClusterRole); ok {
			out = append(out, r)
		}
	}
	return out
}

// Run works until ctx is done.
func (c *Controller) Run(ctx context.Context) {
	r := runner.New("clusterrole-aggregation", 2, c.reconcile)
	// Any change of a role may change every aggregated role of its cluster.
	_ = r.EnqueueFrom(c.informer, func(obj any) []runner.Key {
		k, ok := runner.KeyOf(obj)
		if !ok {
			return nil
		}
		var out []runner.Key
		for _, role := range c.rolesOf(k.Cluster) {
			if role.AggregationRule != nil {
				out = append(out, runner.Key{Cluster: k.Cluster, Name: role.Name})
			}
		}
		return out
	})
	r.Run(ctx)
}

func (c *Controller) reconcile(ctx context.Context, key runner.Key) (time.Duration, error) {
	obj, ok, err := c.informer.GetStore().GetByKey(key.String())
	if err != nil || !ok {
		return 0, err
	}
	role := obj.(*rbacv1.ClusterRole)
	if role.AggregationRule == nil || role.DeletionTimestamp != nil {
		return 0, nil
	}
	return 0, c.aggregation.reconcile(ctx, key.Cluster, role)
}
