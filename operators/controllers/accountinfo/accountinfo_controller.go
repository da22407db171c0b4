// Package accountinfo is the account-operator's AccountInfo controller: an
// AccountInfo is not deleted while Accounts remain in its workspace.
package accountinfo

import (
	"context"

	ctrl "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	mcreconcile "sigs.k8s.io/multicluster-runtime/pkg/reconcile"

	corev1alpha1 "github.com/meshplane/meshplane/apis/core/v1alpha1"
	"github.com/meshplane/meshplane/providers/manager"
)

// SetupWithManager adds the controller to the kit's manager, following
// AccountInfos in every workspace at once (manager.Kit.WildcardController).
func SetupWithManager(kit *manager.Kit) error {
	client := kit.Client
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
	return kit.WildcardController("accountinfo", &corev1alpha1.AccountInfo{}, 1,
		mcreconcile.Func(func(ctx context.Context, req mcreconcile.Request) (reconcile.Result, error) {
			after, err := r.reconcile(ctx, string(req.ClusterName), req.Name)
			return reconcile.Result{RequeueAfter: after}, err
		}))
}
