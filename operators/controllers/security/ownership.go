package security

import (
	"context"
	"fmt"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"

	corev1alpha1 "github.com/meshplane/meshplane/apis/core/v1alpha1"
	"github.com/meshplane/meshplane/apis/fga"
)

// Ownership keeps the operator's own tuples of every account (type
// account) in its organization's store: its creator owns it (through its
// owner role) and its parent account is its parent. They are computed
// from the Account (spec.creator, set by admission and immutable) and the
// AccountInfo of the workspace it lives in (system-only, checked against
// the workspace tree), never from a list a grant edit changes. Each is
// written once per process, so tuples lost before (a crash, an edit of an
// earlier version) are back after a restart. Organizations' own tuples are
// the Store controller's.
type Ownership struct {
	Deps
	written sync.Map // cluster/name/uid/creator/store -> true
}

// Reconcile writes the tuples of Account name in cluster; the duration is
// when to look again.
func (o *Ownership) Reconcile(ctx context.Context, cluster, name string) (time.Duration, error) {
	acc, err := o.GetAccount(ctx, cluster, name)
	if apierrors.IsNotFound(err) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	if acc.Spec.Type != corev1alpha1.AccountTypeAccount || !acc.DeletionTimestamp.IsZero() {
		// Organizations: the Store controller. Deleting: the terminator
		// deletes the tuples, nothing is written again.
		return 0, nil
	}
	if !meta.IsStatusConditionTrue(acc.Status.Conditions, corev1alpha1.ConditionReady) {
		// Until its workspace is ready the initializer writes them; only a
		// workspace that was initialized is terminated (and its tuples
		// deleted), so none are written for an Account without one.
		return 0, nil
	}
	var info *corev1alpha1.AccountInfo
	if o.AccountInfo != nil {
		if info, err = o.AccountInfo(ctx, cluster); err != nil {
			return 0, err
		}
	}
	if info == nil {
		return 30 * time.Second, nil
	}
	if found, err := o.accountOfWorkspace(ctx, cluster, info); err != nil || !found {
		// An AccountInfo that is not this workspace's names no parent.
		return time.Minute, nil
	}
	storeID := info.Spec.FGA.Store.ID
	if storeID == "" {
		return 5 * time.Second, nil
	}
	creator := ""
	if acc.Spec.Creator != nil {
		creator = *acc.Spec.Creator
	}
	key := fmt.Sprintf("%s/%s/%s/%s/%s", cluster, name, acc.UID, creator, storeID)
	if _, done := o.written.Load(key); done {
		return 0, nil
	}
	tuples := fga.AccountTuples(cluster, name, creator, info.Spec.Account.OriginClusterID, info.Spec.Account.Name)
	if err := o.WriteTuples(ctx, storeID, tuples, nil); err != nil {
		return 0, fmt.Errorf("writing the tuples of account %s: %w", name, err)
	}
	o.written.Store(key, true)
	return 0, nil
}
