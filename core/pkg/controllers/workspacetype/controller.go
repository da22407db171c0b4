// Package workspacetype publishes, in each WorkspaceType's status, the
// URLs of the virtual workspaces its initializer and terminator use.
package workspacetype

import (
	"context"
	"reflect"
	"time"

	tenancyv1alpha1 "github.com/kcp-dev/sdk/apis/tenancy/v1alpha1"
	"github.com/kcp-dev/sdk/apis/third_party/conditions/util/conditions"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/cache"

	"github.com/meshplane/meshplane/core/pkg/reconciler/client"
	"github.com/meshplane/meshplane/core/pkg/reconciler/runner"
)

// Controller reconciles WorkspaceType status.
type Controller struct {
	types       client.Client[*tenancyv1alpha1.WorkspaceType]
	informer    cache.SharedIndexInformer
	externalURL string
}

// New returns the controller; informer follows WorkspaceTypes in every
// cluster (the caller runs it).
func New(types client.Client[*tenancyv1alpha1.WorkspaceType], externalURL string, informer cache.SharedIndexInformer) *Controller {
	return &Controller{types: types, externalURL: externalURL, informer: informer}
}

// Run works until ctx is done.
func (c *Controller) Run(ctx context.Context) {
	r := runner.New("workspacetype", 2, c.reconcile)
	_ = r.EnqueueFrom(c.informer, runner.ObjectKeys)
	r.Run(ctx)
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
	var vws []tenancyv1alpha1.VirtualWorkspace
	if wt.Spec.Initializer {
		vws = append(vws, tenancyv1alpha1.VirtualWorkspace{URL: c.externalURL + "/services/initializingworkspaces/" + id,
			Type: tenancyv1alpha1.VirtualWorkspaceTypeInitializing})
	}
	if wt.Spec.Terminator {
		vws = append(vws, tenancyv1alpha1.VirtualWorkspace{URL: c.externalURL + "/services/terminatingworkspaces/" + id,
			Type: tenancyv1alpha1.VirtualWorkspaceTypeTerminating})
	}
	if reflect.DeepEqual(wt.Status.VirtualWorkspaces, vws) && conditions.IsTrue(wt, tenancyv1alpha1.WorkspaceTypeVirtualWorkspaceURLsReady) {
		return 0, nil
	}
	wt = wt.DeepCopy()
	wt.Status.VirtualWorkspaces = vws
	conditions.MarkTrue(wt, tenancyv1alpha1.WorkspaceTypeVirtualWorkspaceURLsReady)
	_, err = c.types.UpdateStatus(ctx, cluster, "", wt.Name, wt)
	return 0, err
}
