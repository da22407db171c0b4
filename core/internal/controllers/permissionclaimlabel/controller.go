// Package permissionclaimlabel labels the objects of a consumer that an
// accepted permission claim picks when the claim changes (a binding
// accepts, rejects or re-scopes it), as kcp's permissionclaimlabel
// controller does; writes in between are labelled by the permissionclaims
// admission plugin.
//
// Reconcile steps (one file each):
//  1. reconcile_labels.go: list the objects of the claimed resource in the
//     consumer and update those whose claim labels differ from what the
//     claims pick.
//
// Queue keys: the consumer cluster and the resource (<resource>.<group>).
package permissionclaimlabel

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/meshplane/meshplane/core/internal/apiexport"
	"github.com/meshplane/meshplane/core/internal/reconciler/runner"
)

// Objects reads and writes the objects of one resource in one cluster.
type Objects interface {
	// List returns the objects of gr in cluster; ok is false when the
	// cluster does not serve gr.
	List(ctx context.Context, cluster string, gr schema.GroupResource) (objs []Object, ok bool, err error)
}

// Object is one object with a way to write its new labels.
type Object struct {
	Namespace, Name string
	Labels          map[string]string
	// SetLabels writes labels on the object as it was listed (an
	// optimistic update: a conflict retries the key).
	SetLabels func(ctx context.Context, labels map[string]string) error
}

// Controller relabels claimed objects.
type Controller struct {
	runner *runner.Runner
	labels *labelsReconciler
}

// New returns the controller; it hears of claim changes from then on.
func New(consumers *apiexport.Consumers, objects Objects) *Controller {
	c := &Controller{labels: &labelsReconciler{list: objects.List, claims: consumers.ClaimsOn}}
	c.runner = runner.New("permissionclaimlabel", 2, c.reconcile)
	consumers.OnClaimsChange(func(consumer string, resources []schema.GroupResource) {
		for _, gr := range resources {
			c.runner.Add(runner.Key{Cluster: consumer, Name: gr.String()})
		}
	})
	return c
}

// Run works until ctx is done.
func (c *Controller) Run(ctx context.Context) { c.runner.Run(ctx) }

func (c *Controller) reconcile(ctx context.Context, key runner.Key) (time.Duration, error) {
	return c.labels.reconcile(ctx, key.Cluster, schema.ParseGroupResource(key.Name))
}
