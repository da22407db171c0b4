// Package workspace turns Workspace objects into logical clusters.
//
// Reconcile steps, in order (one file each):
//  1. reconcile_deletion.go: delete the child LogicalCluster, wait for it
//     to go, then release the Workspace's finalizer;
//  2. reconcile_scheduling.go: resolve the type and its initializers,
//     create the child's LogicalCluster and the creator's workspace-admin
//     binding, then record spec.cluster and spec.URL;
//  3. reconcile_phase.go: mirror the LogicalCluster's phase and
//     initializers.
//
// Mounted Workspaces (spec.mount) get no logical cluster: only deletion
// is done here for them.
package workspace

import (
	"context"
	"time"

	corev1alpha1 "github.com/kcp-dev/sdk/apis/core/v1alpha1"
	tenancyv1alpha1 "github.com/kcp-dev/sdk/apis/tenancy/v1alpha1"
	authenticationv1 "k8s.io/api/authentication/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/cache"

	"github.com/meshplane/meshplane/core/internal/reconciler/client"
	"github.com/meshplane/meshplane/core/internal/reconciler/runner"
	"github.com/meshplane/meshplane/core/internal/tenancy"
)

// Controller reconciles Workspaces.
type Controller struct {
	workspaces client.Client[*tenancyv1alpha1.Workspace]
	informer   cache.SharedIndexInformer
	index      *tenancy.Index

	deletion   *deletionReconciler
	scheduling *schedulingReconciler
	phase      *phaseReconciler
}

// New returns the controller. informer follows Workspaces in every
// cluster; the caller runs it.
func New(workspaces client.Client[*tenancyv1alpha1.Workspace], logicalClusters client.Client[*corev1alpha1.LogicalCluster],
	bindings client.Writer[*rbacv1.ClusterRoleBinding], index *tenancy.Index, types *tenancy.Types, externalURL string,
	informer cache.SharedIndexInformer) *Controller {
	getLC := func(ctx context.Context, cluster string) (*corev1alpha1.LogicalCluster, error) {
		return logicalClusters.Get(ctx, cluster, "", corev1alpha1.LogicalClusterName)
	}
	update := func(ctx context.Context, parent string, ws *tenancyv1alpha1.Workspace) (*tenancyv1alpha1.Workspace, error) {
		return workspaces.Update(ctx, parent, "", ws.Name, ws)
	}
	updateStatus := func(ctx context.Context, parent string, ws *tenancyv1alpha1.Workspace) error {
		_, err := workspaces.UpdateStatus(ctx, parent, "", ws.Name, ws)
		return err
	}
	return &Controller{
		workspaces: workspaces,
		informer:   informer,
		index:      index,
		deletion: &deletionReconciler{
			getLogicalCluster: getLC,
			deleteLogicalCluster: func(ctx context.Context, cluster string) error {
				return logicalClusters.Delete(ctx, cluster, "", corev1alpha1.LogicalClusterName)
			},
			update: update, updateStatus: updateStatus,
		},
		scheduling: &schedulingReconciler{
			path:        index.Path,
			resolveType: types.Resolve,
			aliases:     types.Aliases,
			createLogicalCluster: func(ctx context.Context, cluster, path, typeID, url string, creator *authenticationv1.UserInfo,
				inits []corev1alpha1.LogicalClusterInitializer, terms []corev1alpha1.LogicalClusterTerminator, owner *corev1alpha1.LogicalClusterOwner) error {
				return tenancy.CreateLogicalCluster(ctx, logicalClusters, cluster, path, typeID, url, creator, inits, terms, owner)
			},
			ensureAdmin: func(ctx context.Context, cluster string, owner *authenticationv1.UserInfo) error {
				return tenancy.EnsureAdmin(ctx, bindings, cluster, owner)
			},
			update: update, updateStatus: updateStatus,
			externalURL: externalURL,
		},
		phase: &phaseReconciler{getLogicalCluster: getLC, updateStatus: updateStatus},
	}
}

// Run reconciles until ctx is done.
func (c *Controller) Run(ctx context.Context) {
	r := runner.New("workspace", 4, c.reconcile)
	_ = r.EnqueueFrom(c.informer, runner.ObjectKeys)
	// A change of a child's LogicalCluster concerns its Workspace.
	_ = r.EnqueueFrom(c.index.Informer(), func(obj any) []runner.Key {
		if lc, ok := obj.(*corev1alpha1.LogicalCluster); ok && lc.Spec.Owner != nil && lc.Spec.Owner.Resource == "workspaces" {
			return []runner.Key{{Cluster: lc.Spec.Owner.Cluster, Name: lc.Spec.Owner.Name}}
		}
		return nil
	})
	r.Run(ctx)
}

func (c *Controller) reconcile(ctx context.Context, key runner.Key) (time.Duration, error) {
	ws, err := c.workspaces.Get(ctx, key.Cluster, "", key.Name)
	if apierrors.IsNotFound(err) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	switch {
	case ws.DeletionTimestamp != nil:
		return c.deletion.reconcile(ctx, key.Cluster, ws)
	case ws.Spec.Mount != nil:
		return 0, nil // a mount has no logical cluster: see controllers/workspacemount
	case ws.Spec.Cluster == "":
		return 0, c.scheduling.reconcile(ctx, key.Cluster, ws)
	default:
		return 0, c.phase.reconcile(ctx, key.Cluster, ws)
	}
}
