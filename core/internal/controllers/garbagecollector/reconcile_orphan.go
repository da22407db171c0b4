package garbagecollector

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// orphanStep handles an owner deleted with propagationPolicy Orphan: its
// dependents lose their references to it and stay.
type orphanStep struct {
	dependents      func(cluster string, owner types.UID) []dependent
	removeOwnerRef  func(ctx context.Context, o object, owners ...types.UID) error
	removeFinalizer func(ctx context.Context, o object, finalizer string) error
}

func (s orphanStep) reconcile(ctx context.Context, owner object) error {
	for _, d := range s.dependents(owner.Cluster, owner.UID) {
		if err := s.removeOwnerRef(ctx, d.object, owner.UID); err != nil {
			return fmt.Errorf("orphaning %s %s/%s: %w", d.GroupKind, d.Namespace, d.Name, err)
		}
	}
	return s.removeFinalizer(ctx, owner, metav1.FinalizerOrphanDependents)
}
