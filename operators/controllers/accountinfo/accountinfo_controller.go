// Package accountinfo is the account-operator's AccountInfo controller: an
// AccountInfo is not deleted while Accounts remain in its workspace.
package accountinfo

import (
	"context"

	ctrl "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	mcbuilder "sigs.k8s.io/multicluster-runtime/pkg/builder"
	mcmanager "sigs.k8s.io/multicluster-runtime/pkg/manager"
	"sigs.k8s.io/multicluster-runtime/pkg/multicluster"
	mcreconcile "sigs.k8s.io/multicluster-runtime/pkg/reconcile"

	corev1alpha1 "github.com/meshplane/meshplane/apis/core/v1alpha1"
)

// SetupWithManager adds the controller to mgr; client, when set, returns
// an engaged workspace's client (default: the cluster's own).
func SetupWithManager(mgr mcmanager.Manager, client func(ctx context.Context, cluster string) (ctrl.Client, error)) error {
	if client == nil {
		client = func(ctx context.Context, cluster string) (ctrl.Client, error) {
			cl, err := mgr.GetCluster(ctx, multicluster.ClusterName(cluster))
			if err != nil {
				return nil, err
			}
			return cl.GetClient(), nil
		}
	}
	r := &reconciler{
		getInfo: func(ctx context.Context, cluster, name string) (*corev1alpha1.AccountInfo, error) {
			c, err := client(ctx, cluster)
			if err != nil {
				return nil, err
			}
			info := &corev1alpha1.AccountInfo{}
			return info, c.Get(ctx, ctrl.ObjectKey{Name: name}, info)
		},
		updateInfo: func(ctx context.Context, cluster string, info *corev1alpha1.AccountInfo) error {
			c, err := client(ctx, cluster)
			if err != nil {
				return err
			}
			return c.Update(ctx, info)
		},
		countAccounts: func(ctx context.Context, cluster string) ([]string, error) {
			c, err := client(ctx, cluster)
			if err != nil {
				return nil, err
			}
			list := &corev1alpha1.AccountList{}
			if err := c.List(ctx, list); err != nil {
				return nil, err
			}
			names := make([]string, 0, len(list.Items))
			for _, a := range list.Items {
				names = append(names, a.Name)
			}
			return names, nil
		},
	}
	return mcbuilder.ControllerManagedBy(mgr).
		Named("accountinfo").
		For(&corev1alpha1.AccountInfo{}).
		Complete(mcreconcile.Func(func(ctx context.Context, req mcreconcile.Request) (reconcile.Result, error) {
			after, err := r.reconcile(ctx, string(req.ClusterName), req.Name)
			return reconcile.Result{RequeueAfter: after}, err
		}))
}
