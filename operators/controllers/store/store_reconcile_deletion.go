package store

import (
	"context"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	corev1alpha1 "github.com/meshplane/meshplane/apis/core/v1alpha1"
)

// deletionStep deletes the Store's OpenFGA store (its tuples and models
// go with it). A store that is already gone, or never was, counts as
// deleted, so deletion never hangs on it.
type deletionStep struct {
	deleteStore func(ctx context.Context, id string) error
	listStores  func(ctx context.Context, name string) ([]string, error)
}

func (s *deletionStep) reconcile(ctx context.Context, st *state) result {
	store := st.store
	ids := []string{}
	if store.Status.StoreID != "" {
		ids = append(ids, store.Status.StoreID)
	}
	// A store created for this Store whose id never reached the status.
	more, err := s.listStores(ctx, openFGAName(store))
	if err == nil {
		ids = append(ids, more...)
	}
	for _, id := range ids {
		if err := s.deleteStore(ctx, id); err != nil {
			setCondition(store, corev1alpha1.ConditionReady, metav1.ConditionFalse, corev1alpha1.ReasonDeleting, err.Error())
			return wait(5 * time.Second)
		}
	}
	return next
}
