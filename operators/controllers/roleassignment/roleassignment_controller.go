// Package roleassignment is the security-operator's RoleAssignment
// controller: every RoleAssignment (core.platform-mesh.io/v1alpha1) becomes
// one tuple in its organization's OpenFGA store, giving its subject its
// role on the account of the workspace it lives in; deleting it revokes
// the tuple. See README.md for the steps.
package roleassignment

import (
	"context"
	"errors"
	"fmt"
	"time"

	openfgav1 "github.com/openfga/api/proto/openfga/v1"
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
	// Write adds and removes tuples in an OpenFGA store.
	Write func(ctx context.Context, storeID string, add, remove []corev1alpha1.Tuple) error
	// Model returns the newest model of an OpenFGA store (nil: none yet).
	Model func(ctx context.Context, storeID string) (*openfgav1.AuthorizationModel, error)
	// AccountInfo reads a workspace's AccountInfo without a request (nil
	// when not known); the cluster's client is asked then.
	AccountInfo func(ctx context.Context, cluster string) (*corev1alpha1.AccountInfo, error)
	// WorkspaceCluster returns the logical cluster of Workspace name in
	// cluster, and whether it exists (the workspace tree).
	WorkspaceCluster func(ctx context.Context, cluster, name string) (string, bool, error)
	// Workers is the number of RoleAssignments reconciled in parallel.
	Workers int
}

const callTimeout = 30 * time.Second

// SetupWithManager adds the controller to mgr.
func SetupWithManager(mgr mcmanager.Manager, opts Options) error {
	if opts.Write == nil || opts.Model == nil || opts.WorkspaceCluster == nil {
		return errors.New("roleassignment controller: Write, Model and WorkspaceCluster are required")
	}
	clientOf := func(ctx context.Context, cluster string) (ctrl.Client, error) {
		cl, err := mgr.GetCluster(ctx, multicluster.ClusterName(cluster))
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %v", errClusterGone, cluster, err)
		}
		return cl.GetClient(), nil
	}
	r := newReconciler(clientOf, opts)
	return mcbuilder.ControllerManagedBy(mgr).
		Named("roleassignment").
		For(&corev1alpha1.RoleAssignment{}).
		WithOptions(mccontroller.Options{MaxConcurrentReconciles: max(opts.Workers, 1)}).
		Complete(mcreconcile.Func(func(ctx context.Context, req mcreconcile.Request) (reconcile.Result, error) {
			after, err := r.reconcile(ctx, string(req.ClusterName), req.Name)
			return reconcile.Result{RequeueAfter: after}, err
		}))
}

func newReconciler(clientOf func(ctx context.Context, cluster string) (ctrl.Client, error), opts Options) *reconciler {
	accountInfo := func(ctx context.Context, cluster string) (*corev1alpha1.AccountInfo, error) {
		if opts.AccountInfo != nil {
			if info, err := opts.AccountInfo(ctx, cluster); err != nil || info != nil {
				return info, err
			}
		}
		cl, err := clientOf(ctx, cluster)
		if err != nil {
			return nil, err
		}
		info := &corev1alpha1.AccountInfo{}
		if err := cl.Get(ctx, ctrl.ObjectKey{Name: corev1alpha1.AccountInfoName}, info); err != nil {
			return nil, err
		}
		return info, nil
	}
	return &reconciler{
		get: func(ctx context.Context, cluster, name string) (*corev1alpha1.RoleAssignment, error) {
			cl, err := clientOf(ctx, cluster)
			if err != nil {
				return nil, err
			}
			ra := &corev1alpha1.RoleAssignment{}
			return ra, cl.Get(ctx, ctrl.ObjectKey{Name: name}, ra)
		},
		list: func(ctx context.Context, cluster string) ([]corev1alpha1.RoleAssignment, error) {
			cl, err := clientOf(ctx, cluster)
			if err != nil {
				return nil, err
			}
			var list corev1alpha1.RoleAssignmentList
			if err := cl.List(ctx, &list); err != nil {
				return nil, err
			}
			return list.Items, nil
		},
		update: func(ctx context.Context, cluster string, ra *corev1alpha1.RoleAssignment) error {
			cl, err := clientOf(ctx, cluster)
			if err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(ctx, callTimeout)
			defer cancel()
			return cl.Update(ctx, ra)
		},
		updateStatus: func(ctx context.Context, cluster string, ra *corev1alpha1.RoleAssignment) error {
			cl, err := clientOf(ctx, cluster)
			if err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(ctx, callTimeout)
			defer cancel()
			return cl.Status().Update(ctx, ra)
		},
		resolve:  &resolveStep{accountInfo: accountInfo, workspaceCluster: opts.WorkspaceCluster},
		role:     &roleStep{model: opts.Model, write: opts.Write},
		tuple:    &tupleStep{write: opts.Write},
		deletion: &deletionStep{write: opts.Write},
	}
}
