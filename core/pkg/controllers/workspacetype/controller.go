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

	"github.com/meshplane/meshplane/core/pkg/reconciler/runner"
	"github.com/meshplane/meshplane/core/pkg/registry/local"
	"github.com/meshplane/meshplane/core/pkg/registry/wildcard"
)

// Controller reconciles WorkspaceType status.
type Controller struct {
	Types       local.Client[*tenancyv1alpha1.WorkspaceType]
	TypeList    wildcard.Storage
	ExternalURL string

	runner *runner.Runner
}

// Run works until ctx is done.
func (c *Controller) Run(ctx context.Context) {
	c.runner = runner.New("workspacetype", 2, c.reconcile)
	informer := wildcard.NewInformer(c.TypeList, &tenancyv1alpha1.WorkspaceType{})
	_ = c.runner.EnqueueFrom(informer, runner.ObjectKeys)
	go informer.RunWithContext(ctx)
	c.runner.Run(ctx)
}

func (c *Controller) reconcile(ctx context.Context, key runner.Key) (time.Duration, error) {
	cluster, name := key.Cluster, key.Name
	wt, err := c.Types.Get(ctx, cluster, "", name)
	if apierrors.IsNotFound(err) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	id := cluster + ":" + name
	var vws []tenancyv1alpha1.VirtualWorkspace
	if wt.Spec.Initializer {
		vws = append(vws, tenancyv1alpha1.VirtualWorkspace{URL: c.ExternalURL + "/services/initializingworkspaces/" + id,
			Type: tenancyv1alpha1.VirtualWorkspaceTypeInitializing})
	}
	if wt.Spec.Terminator {
		vws = append(vws, tenancyv1alpha1.VirtualWorkspace{URL: c.ExternalURL + "/services/terminatingworkspaces/" + id,
			Type: tenancyv1alpha1.VirtualWorkspaceTypeTerminating})
	}
	if reflect.DeepEqual(wt.Status.VirtualWorkspaces, vws) && conditions.IsTrue(wt, tenancyv1alpha1.WorkspaceTypeVirtualWorkspaceURLsReady) {
		return 0, nil
	}
	wt = wt.DeepCopy()
	wt.Status.VirtualWorkspaces = vws
	conditions.MarkTrue(wt, tenancyv1alpha1.WorkspaceTypeVirtualWorkspaceURLsReady)
	_, err = c.Types.UpdateStatus(ctx, cluster, "", wt.Name, wt)
	return 0, err
}
