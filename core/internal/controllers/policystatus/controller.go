// Package policystatus fills in the status of ValidatingAdmissionPolicies
// as kube's status controller does.
//
// Reconcile steps (one file each):
//  1. reconcile_typecheck.go: for a policy whose generation the status has
//     not observed yet, type-check its expressions against the kinds it
//     matches (k8s.io/apiserver's type checker) and write
//     status.observedGeneration and status.typeChecking.
package policystatus

import (
	"context"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/cache"

	"github.com/meshplane/meshplane/core/internal/reconciler/client"
	"github.com/meshplane/meshplane/core/internal/reconciler/runner"
)

// Controller keeps the status of every cluster's policies.
type Controller struct {
	policies client.Client[*admissionregistrationv1.ValidatingAdmissionPolicy]
	informer cache.SharedIndexInformer
	step     typeCheckStep
}

// New returns the controller. check type-checks a policy of a cluster
// (nil warnings when it cannot tell).
func New(policies client.Client[*admissionregistrationv1.ValidatingAdmissionPolicy], informer cache.SharedIndexInformer,
	check func(cluster string, p *admissionregistrationv1.ValidatingAdmissionPolicy) []admissionregistrationv1.ExpressionWarning) *Controller {
	return &Controller{policies: policies, informer: informer, step: typeCheckStep{check: check,
		updateStatus: func(ctx context.Context, cluster string, p *admissionregistrationv1.ValidatingAdmissionPolicy) error {
			_, err := policies.UpdateStatus(ctx, cluster, "", p.Name, p)
			return err
		}}}
}

// Run works until ctx is done.
func (c *Controller) Run(ctx context.Context) {
	r := runner.New("policystatus", 2, c.reconcile)
	_ = r.EnqueueFrom(c.informer, runner.ObjectKeys)
	r.Run(ctx)
}

func (c *Controller) reconcile(ctx context.Context, key runner.Key) (time.Duration, error) {
	p, err := client.StoredOrLive(ctx, c.informer.GetStore(), c.policies, key.Cluster, "", key.Name)
	if apierrors.IsNotFound(err) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	return 0, c.step.reconcile(ctx, key.Cluster, p)
}
