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
// With several shards (shards not nil), scheduling picks the shard and the
// child's LogicalCluster is written on it through its API; a child on
// another shard is read from there, and its changes arrive through a
// watch on that shard (sharding.Others).
//
// Mounted Workspaces (spec.mount) get no logical cluster: only deletion
// is done here for them.
package workspace

import (
	"context"
	"errors"
	"time"

	corev1alpha1 "github.com/kcp-dev/sdk/apis/core/v1alpha1"
	tenancyv1alpha1 "github.com/kcp-dev/sdk/apis/tenancy/v1alpha1"
	authenticationv1 "k8s.io/api/authentication/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"

	"github.com/meshplane/meshplane/core/internal/reconciler/client"
	"github.com/meshplane/meshplane/core/internal/reconciler/runner"
	"github.com/meshplane/meshplane/core/internal/sharding"
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
	shards     *sharding.Shards
}

// New returns the controller. informer follows Workspaces in every
// cluster; the caller runs it.
func New(workspaces client.Client[*tenancyv1alpha1.Workspace], logicalClusters client.Client[*corev1alpha1.LogicalCluster],
	bindings client.Writer[*rbacv1.ClusterRoleBinding], index *tenancy.Index, types *tenancy.Types, externalURL string,
	shards *sharding.Shards, informer cache.SharedIndexInformer) *Controller {
	local := &sharding.Clients{LogicalClusters: logicalClusters, Bindings: bindings}
	getLC := func(ctx context.Context, cluster string) (*corev1alpha1.LogicalCluster, error) {
		on, err := shards.On(ctx, local)
		if err != nil {
			return nil, err
		}
		if on == local {
			// The index's informer sends the events of local children.
			return client.StoredOrLive(ctx, index.Informer().GetStore(), on.LogicalClusters, cluster, "", corev1alpha1.LogicalClusterName)
		}
		return on.LogicalClusters.Get(ctx, cluster, "", corev1alpha1.LogicalClusterName)
	}
	update := func(ctx context.Context, parent string, ws *tenancyv1alpha1.Workspace) (*tenancyv1alpha1.Workspace, error) {
		return workspaces.Update(ctx, parent, "", ws.Name, ws)
	}
	updateStatus := func(ctx context.Context, parent string, ws *tenancyv1alpha1.Workspace) error {
		_, err := workspaces.UpdateStatus(ctx, parent, "", ws.Name, ws)
		return err
	}
	c := &Controller{
		workspaces: workspaces,
		informer:   informer,
		index:      index,
		deletion: &deletionReconciler{
			getLogicalCluster: getLC,
			deleteLogicalCluster: func(ctx context.Context, cluster string) error {
				on, err := shards.On(ctx, local)
				if err != nil {
					return err
				}
				return on.LogicalClusters.Delete(ctx, cluster, "", corev1alpha1.LogicalClusterName)
			},
			update: update, updateStatus: updateStatus,
		},
		scheduling: &schedulingReconciler{
			path:        index.Path,
			resolveType: types.Resolve,
			aliases:     types.Aliases,
			createLogicalCluster: func(ctx context.Context, cluster, path, typeID, url string, creator *authenticationv1.UserInfo,
				inits []corev1alpha1.LogicalClusterInitializer, terms []corev1alpha1.LogicalClusterTerminator, owner *corev1alpha1.LogicalClusterOwner) error {
				on, err := shards.On(ctx, local)
				if err != nil {
					return err
				}
				shard := sharding.ShardFrom(ctx)
				if shard == "" {
					shard = tenancy.ShardName
				}
				return tenancy.CreateLogicalClusterOn(ctx, on.LogicalClusters, shard, cluster, path, typeID, url, creator, inits, terms, owner)
			},
			ensureAdmin: func(ctx context.Context, cluster string, owner *authenticationv1.UserInfo) error {
				on, err := shards.On(ctx, local)
				if err != nil {
					return err
				}
				return tenancy.EnsureAdmin(ctx, on.Bindings, cluster, owner)
			},
			update: update, updateStatus: updateStatus,
			externalURL: externalURL,
		},
		shards: shards,
		phase:  &phaseReconciler{getLogicalCluster: getLC, updateStatus: updateStatus},
	}
	if shards != nil {
		c.scheduling.pickShard = func(ctx context.Context, ws *tenancyv1alpha1.Workspace, cluster string, typeSelector labels.Selector) (string, string, error) {
			sh, err := shards.Pick(ctx, ws, cluster, typeSelector)
			if err != nil {
				return "", "", err
			}
			shards.Others().Ensure(sh.Name, sh.Spec.BaseURL) // to follow the child's LogicalCluster
			if sh.Spec.ExternalURL != "" {
				return sh.Name, sh.Spec.ExternalURL, nil
			}
			return sh.Name, sh.Spec.BaseURL, nil
		}
	}
	return c
}

// unschedulableRetry is how often a Workspace no shard took is tried again.
const unschedulableRetry = time.Second

// workers reconcile Workspaces in parallel. A reconcile mostly waits for
// its writes (the child's LogicalCluster, the admin binding, the
// Workspace and its status: ~65 ms in a burst of 1,000 Accounts): with 4,
// a burst queued each Workspace for 13 s on average and mirrored a
// LogicalCluster's progress that late.
const workers = 16

// Run reconciles until ctx is done.
func (c *Controller) Run(ctx context.Context) {
	r := runner.New("workspace", workers, c.reconcile)
	_ = r.EnqueueFrom(c.informer, runner.ObjectKeys)
	// A change of a child's LogicalCluster concerns its Workspace.
	owner := func(obj any) []runner.Key {
		if lc, ok := obj.(*corev1alpha1.LogicalCluster); ok && lc.Spec.Owner != nil && lc.Spec.Owner.Resource == "workspaces" {
			return []runner.Key{{Cluster: lc.Spec.Owner.Cluster, Name: lc.Spec.Owner.Name}}
		}
		return nil
	}
	_ = r.EnqueueFrom(c.index.Informer(), owner)
	if c.shards != nil {
		// Children on other shards (the server runs the replicas).
		_ = r.EnqueueFrom(c.shards.Others(), owner)
	}
	r.Run(ctx)
}

func (c *Controller) reconcile(ctx context.Context, key runner.Key) (time.Duration, error) {
	// Reads come from the informers' stores, at least as fresh as the
	// events that woke this key (a stale read of our own last write ends
	// in a conflict and another round). The objects are the stores': the
	// steps copy before changing them.
	ws, err := client.StoredOrLive(ctx, c.informer.GetStore(), c.workspaces, key.Cluster, "", key.Name)
	if apierrors.IsNotFound(err) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	remote := c.shards != nil && ws.Annotations[tenancy.ShardAnnotation] != "" && ws.Annotations[tenancy.ShardAnnotation] != c.shards.Self
	if remote {
		ctx = sharding.WithShard(ctx, ws.Annotations[tenancy.ShardAnnotation])
	}
	switch {
	case ws.DeletionTimestamp != nil:
		return c.deletion.reconcile(ctx, key.Cluster, ws)
	case ws.Spec.Mount != nil:
		return 0, nil // a mount has no logical cluster: see controllers/workspacemount
	case ws.Spec.Cluster == "":
		if err := c.scheduling.reconcile(ctx, key.Cluster, ws); errors.Is(err, errUnschedulable) {
			return unschedulableRetry, nil // Shards are not watched here
		} else if err != nil {
			return 0, err
		}
		return 0, nil
	default:
		return 0, c.phase.reconcile(ctx, key.Cluster, ws)
	}
}
