// Package invite is the security-operator's Invite controller: an Invite
// (core.platform-mesh.io/v1alpha1) turns into a RoleAssignment it owns in
// the same workspace, at once for an invitation by user name, and for an
// invitation by e-mail address once the rebac-authz-webhook has seen the
// invitee sign in with that address verified (the webhook creates the
// RoleAssignment then). Expired invitations never turn into one. Deleting
// an Invite deletes its RoleAssignment (the grant is revoked). See
// README.md for the steps.
package invite

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	mcbuilder "sigs.k8s.io/multicluster-runtime/pkg/builder"
	mccontroller "sigs.k8s.io/multicluster-runtime/pkg/controller"
	mcmanager "sigs.k8s.io/multicluster-runtime/pkg/manager"
	"sigs.k8s.io/multicluster-runtime/pkg/multicluster"
	mcreconcile "sigs.k8s.io/multicluster-runtime/pkg/reconcile"

	corev1alpha1 "github.com/meshplane/meshplane/apis/core/v1alpha1"
)

// Options configure the controller.
type Options struct {
	// Workers is the number of Invites reconciled in parallel.
	Workers int
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

const callTimeout = 30 * time.Second

// SetupWithManager adds the controller to mgr.
func SetupWithManager(mgr mcmanager.Manager, opts Options) error {
	clientOf := func(ctx context.Context, cluster string) (ctrl.Client, error) {
		cl, err := mgr.GetCluster(ctx, multicluster.ClusterName(cluster))
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %v", errClusterGone, cluster, err)
		}
		return cl.GetClient(), nil
	}
	r := newReconciler(clientOf, opts)
	return mcbuilder.ControllerManagedBy(mgr).
		Named("invite").
		For(&corev1alpha1.Invite{}).
		// The RoleAssignment an Invite turned into: its creation by the
		// webhook (an e-mail invitation accepted) and its deletion.
		Owns(&corev1alpha1.RoleAssignment{}).
		WithOptions(mccontroller.Options{MaxConcurrentReconciles: max(opts.Workers, 1)}).
		Complete(mcreconcile.Func(func(ctx context.Context, req mcreconcile.Request) (reconcile.Result, error) {
			after, err := r.reconcile(ctx, string(req.ClusterName), req.Name)
			return reconcile.Result{RequeueAfter: after}, err
		}))
}

func newReconciler(clientOf func(ctx context.Context, cluster string) (ctrl.Client, error), opts Options) *reconciler {
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	withClient := func(ctx context.Context, cluster string, f func(context.Context, ctrl.Client) error) error {
		cl, err := clientOf(ctx, cluster)
		if err != nil {
			return err
		}
		ctx, cancel := context.WithTimeout(ctx, callTimeout)
		defer cancel()
		return f(ctx, cl)
	}
	return &reconciler{
		now: now,
		get: func(ctx context.Context, cluster, name string) (*corev1alpha1.Invite, error) {
			inv := &corev1alpha1.Invite{}
			return inv, withClient(ctx, cluster, func(ctx context.Context, cl ctrl.Client) error {
				return cl.Get(ctx, ctrl.ObjectKey{Name: name}, inv)
			})
		},
		update: func(ctx context.Context, cluster string, inv *corev1alpha1.Invite) error {
			return withClient(ctx, cluster, func(ctx context.Context, cl ctrl.Client) error { return cl.Update(ctx, inv) })
		},
		updateStatus: func(ctx context.Context, cluster string, inv *corev1alpha1.Invite) error {
			return withClient(ctx, cluster, func(ctx context.Context, cl ctrl.Client) error { return cl.Status().Update(ctx, inv) })
		},
		getGrant: func(ctx context.Context, cluster, name string) (*corev1alpha1.RoleAssignment, error) {
			ra := &corev1alpha1.RoleAssignment{}
			err := withClient(ctx, cluster, func(ctx context.Context, cl ctrl.Client) error {
				return cl.Get(ctx, ctrl.ObjectKey{Name: name}, ra)
			})
			if apierrors.IsNotFound(err) {
				return nil, nil
			}
			return ra, err
		},
		createGrant: func(ctx context.Context, cluster string, ra *corev1alpha1.RoleAssignment) error {
			return withClient(ctx, cluster, func(ctx context.Context, cl ctrl.Client) error { return cl.Create(ctx, ra) })
		},
		deleteGrant: func(ctx context.Context, cluster string, ra *corev1alpha1.RoleAssignment) error {
			return withClient(ctx, cluster, func(ctx context.Context, cl ctrl.Client) error {
				return cl.Delete(ctx, ra, ctrl.Preconditions{UID: &ra.UID})
			})
		},
	}
}

func gone(err error) bool {
	return apierrors.IsNotFound(err) || errors.Is(err, errClusterGone)
}

var errClusterGone = errors.New("cluster is no longer served")
