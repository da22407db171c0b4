package store

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/log"

	corev1alpha1 "github.com/meshplane/meshplane/apis/core/v1alpha1"
)

// deletionStep revokes, then deletes, the OpenFGA stores made for the
// Store: every tuple is deleted first, as OpenFGA's store delete is soft
// (Check on a deleted store still answers from its tuples), then the
// store. Only stores whose name says they were made for this Store are
// touched, never whatever status.storeId names. A store that is already
// gone, or never was, counts as deleted, so deletion never hangs on it.
type deletionStep struct {
	storeName   func(ctx context.Context, id string) (string, bool, error)
	listStores  func(ctx context.Context, name string) ([]string, error)
	readTuples  func(ctx context.Context, storeID string) ([]corev1alpha1.Tuple, error)
	write       func(ctx context.Context, storeID string, add, remove []corev1alpha1.Tuple) error
	deleteStore func(ctx context.Context, id string) error
	// shared, when set, is the store organizations share: the
	// organization's tuples are deleted from it, the store is kept.
	shared *sharedStore
}

func (s *deletionStep) reconcile(ctx context.Context, st *state) result {
	store := st.store
	fail := func(err error) result {
		setCondition(store, corev1alpha1.ConditionReady, metav1.ConditionFalse, corev1alpha1.ReasonDeleting, err.Error())
		return wait(5 * time.Second)
	}
	if s.shared != nil {
		// The org's name can be taken again: nothing naming it may stay.
		n, err := s.shared.forgetOrg(ctx, st)
		if err != nil {
			return fail(fmt.Errorf("deleting the organization's tuples from the shared store: %w", err))
		}
		if n > 0 {
			log.FromContext(ctx).Info("organization's tuples deleted from the shared store", "tuples", n)
		}
	}
	ids, err := ownedStores(ctx, store, s.storeName, s.listStores)
	if err != nil {
		return fail(err)
	}
	for _, id := range ids {
		tuples, err := s.readTuples(ctx, id)
		if err != nil {
			return fail(err)
		}
		if len(tuples) > 0 {
			if err := s.write(ctx, id, nil, tuples); err != nil {
				return fail(err)
			}
			log.FromContext(ctx).Info("tuples revoked before deleting the store", "storeId", id, "tuples", len(tuples))
		}
		if err := s.deleteStore(ctx, id); err != nil {
			return fail(err)
		}
	}
	return next
}
