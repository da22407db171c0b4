package accountinfo

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/multicluster-runtime/pkg/multicluster"

	corev1alpha1 "github.com/meshplane/meshplane/apis/core/v1alpha1"
)

// Finalizer holds an AccountInfo while Accounts remain in its workspace.
const Finalizer = "accountinfo.core.platform-mesh.io/finalizer"

// inUseRetry is how often a blocked deletion looks again.
const inUseRetry = 5 * time.Second

// reconciler keeps the finalizer on every AccountInfo and releases it
// once no Account is left in the AccountInfo's workspace.
type reconciler struct {
	getInfo       func(ctx context.Context, cluster, name string) (*corev1alpha1.AccountInfo, error)
	updateInfo    func(ctx context.Context, cluster string, info *corev1alpha1.AccountInfo) error
	countAccounts func(ctx context.Context, cluster string) ([]string, error)
}

func (r *reconciler) reconcile(ctx context.Context, cluster, name string) (time.Duration, error) {
	logger := log.FromContext(ctx).WithValues("cluster", cluster, "accountInfo", name)
	ctx = log.IntoContext(ctx, logger)
	info, err := r.getInfo(ctx, cluster, name)
	if err != nil {
		if gone(err) {
			return 0, nil
		}
		return 0, fmt.Errorf("getting AccountInfo: %w", err)
	}
	if info.DeletionTimestamp.IsZero() {
		if controllerutil.AddFinalizer(info, Finalizer) {
			if err := r.updateInfo(ctx, cluster, info); err != nil && !gone(err) {
				return 0, fmt.Errorf("adding finalizer: %w", err)
			}
		}
		return 0, nil
	}
	if !controllerutil.ContainsFinalizer(info, Finalizer) {
		return 0, nil
	}
	accounts, err := r.countAccounts(ctx, cluster)
	if err != nil {
		if gone(err) {
			return 0, nil
		}
		return 0, fmt.Errorf("listing accounts: %w", err)
	}
	if len(accounts) > 0 {
		logger.Info("AccountInfo deletion waits: Accounts remain in its workspace", "accounts", accounts)
		return inUseRetry, nil
	}
	controllerutil.RemoveFinalizer(info, Finalizer)
	if err := r.updateInfo(ctx, cluster, info); err != nil && !gone(err) {
		return 0, fmt.Errorf("releasing finalizer: %w", err)
	}
	logger.Info("AccountInfo released: no Account left in its workspace")
	return 0, nil
}

func gone(err error) bool {
	return apierrors.IsNotFound(err) || errors.Is(err, multicluster.ErrClusterNotFound)
}
