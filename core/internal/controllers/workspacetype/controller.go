// Package workspacetype publishes, in each WorkspaceType's status, the
// URLs of the virtual workspaces its initializer and terminator use (one
// per shard, as kcp: <shard's virtualWorkspaceURL>/services/<kind>/<id>,
// each shard serving its own workspaces), with the conditions
// VirtualWorkspaceURLsReady and Ready.
package workspacetype

import (
	"context"
	"reflect"
	"sort"
	"strings"
	"time"

	corev1alpha1 "github.com/kcp-dev/sdk/apis/core/v1alpha1"
	tenancyv1alpha1 "github.com/kcp-dev/sdk/apis/tenancy/v1alpha1"
	conditionsv1alpha1 "github.com/kcp-dev/sdk/apis/third_party/conditions/apis/conditions/v1alpha1"
	"github.com/kcp-dev/sdk/apis/third_party/conditions/util/conditions"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/cache"

	"github.com/meshplane/meshplane/core/internal/reconciler/client"
	"github.com/meshplane/meshplane/core/internal/reconciler/runner"
)

// Controller reconciles WorkspaceType status.
type Controller struct {
	types    client.Client[*tenancyv1alpha1.WorkspaceType]
	informer cache.SharedIndexInformer
	shards   func(ctx context.Context) ([]corev1alpha1.Shard, error)
	// shardsChanged registers a func called when shards come or go.
	shardsChanged func(func())
}

// New returns the controller; informer follows WorkspaceTypes in every
// cluster (the caller runs it); shards lists the install's Shards and
// shardsChanged (nil for none) says when they change.
func New(types client.Client[*tenancyv1alpha1.WorkspaceType], shards func(ctx context.Context) ([]corev1alpha1.Shard, error),
	shardsChanged func(func()), informer cache.SharedIndexInformer) *Controller {
	return &Controller{types: types, shards: shards, shardsChanged: shardsChanged, informer: informer}
}

// Run works until ctx is done.
func (c *Controller) Run(ctx context.Context) {
	r := runner.New("workspacetype", 2, c.reconcile)
	_ = r.EnqueueFrom(c.informer, runner.ObjectKeys)
	if c.shardsChanged != nil {
		c.shardsChanged(func() {
			for _, o := range c.informer.GetStore().List() {
				for _, k := range runner.ObjectKeys(o) {
					r.Add(k)
				}
			}
		})
	}
	r.Run(ctx)
}

// urls are the virtual workspace URLs of a type on every shard, sorted as
// kcp sorts them.
func urls(wt *tenancyv1alpha1.WorkspaceType, id string, shards []corev1alpha1.Shard) []tenancyv1alpha1.VirtualWorkspace {
	var vws []tenancyv1alpha1.VirtualWorkspace
	for _, sh := range shards {
		base := strings.TrimSuffix(sh.Spec.VirtualWorkspaceURL, "/")
		if base == "" {
			continue
		}
		if wt.Spec.Initializer {
			vws = append(vws, tenancyv1alpha1.VirtualWorkspace{URL: base + "/services/initializingworkspaces/" + id,
				Type: tenancyv1alpha1.VirtualWorkspaceTypeInitializing})
		}
		if wt.Spec.Terminator {
			vws = append(vws, tenancyv1alpha1.VirtualWorkspace{URL: base + "/services/terminatingworkspaces/" + id,
				Type: tenancyv1alpha1.VirtualWorkspaceTypeTerminating})
		}
	}
	sort.Slice(vws, func(i, j int) bool { return vws[i].URL < vws[j].URL })
	return vws
}

func (c *Controller) reconcile(ctx context.Context, key runner.Key) (time.Duration, error) {
	cluster, name := key.Cluster, key.Name
	wt, err := c.types.Get(ctx, cluster, "", name)
	if apierrors.IsNotFound(err) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	id := cluster + ":" + name
	shards, err := c.shards(ctx)
	if err != nil {
		wt = wt.DeepCopy()
		conditions.MarkFalse(wt, tenancyv1alpha1.WorkspaceTypeVirtualWorkspaceURLsReady, tenancyv1alpha1.ErrorGeneratingURLsReason,
			conditionsv1alpha1.ConditionSeverityError, "error listing Shards: %v", err)
		conditions.SetSummary(wt)
		_, _ = c.types.UpdateStatus(ctx, cluster, "", wt.Name, wt)
		return 5 * time.Second, nil
	}
	vws := urls(wt, id, shards)
	if reflect.DeepEqual(wt.Status.VirtualWorkspaces, vws) && conditions.IsTrue(wt, tenancyv1alpha1.WorkspaceTypeVirtualWorkspaceURLsReady) &&
		conditions.IsTrue(wt, conditionsv1alpha1.ReadyCondition) {
		return 0, nil
	}
	wt = wt.DeepCopy()
	wt.Status.VirtualWorkspaces = vws
	conditions.MarkTrue(wt, tenancyv1alpha1.WorkspaceTypeVirtualWorkspaceURLsReady)
	// Ready summarizes the other conditions, as kcp's controller sets it.
	conditions.SetSummary(wt)
	_, err = c.types.UpdateStatus(ctx, cluster, "", wt.Name, wt)
	return 0, err
}
