package garbagecollector

import (
	"context"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// ownerState is what a live read finds of one owner.
type ownerState int

const (
	// ownerSolid exists and is not waiting for its dependents.
	ownerSolid ownerState = iota
	// ownerAbsent does not exist, or another object has its name.
	ownerAbsent
	// ownerWaiting is being deleted in the foreground.
	ownerWaiting
	// ownerUnresolvable is a namespaced owner of a cluster-scoped object;
	// kept like a solid one.
	ownerUnresolvable
	// ownerUnobserved exists but no watch would see it go, or is of a
	// kind the cluster does not serve (yet): kept like a solid one, and
	// read again after recheckUnobserved (kube's collector requeues its
	// "virtual" owner nodes the same way, until an informer observes
	// them or a live read finds them absent).
	ownerUnobserved
)

// recheckUnobserved is when a dependent of an unobserved owner is looked
// at again.
const recheckUnobserved = time.Minute

// ownersStep deletes an object none of whose owners is alive, and drops
// references to absent owners from an object that still has a live one.
type ownersStep struct {
	owner           func(ctx context.Context, o object, namespaced bool, ref metav1.OwnerReference) (ownerState, error)
	hasDependents   func(cluster string, owner types.UID) bool
	unblock         func(ctx context.Context, o object) error
	removeOwnerRefs func(ctx context.Context, o object, owners ...types.UID) error
	delete          func(ctx context.Context, o object, policy metav1.DeletionPropagation) error
}

// reconcile returns when to look at o again: while an owner kept is
// unobserved.
func (s ownersStep) reconcile(ctx context.Context, o object, namespaced bool, refs []metav1.OwnerReference, finalizers []string) (time.Duration, error) {
	var solid, gone []types.UID
	waiting := false
	var recheck time.Duration
	for _, ref := range refs {
		state, err := s.owner(ctx, o, namespaced, ref)
		if err != nil {
			return 0, err
		}
		switch state {
		case ownerUnobserved:
			recheck = recheckUnobserved
			solid = append(solid, ref.UID)
		case ownerSolid, ownerUnresolvable:
			solid = append(solid, ref.UID)
		case ownerAbsent:
			gone = append(gone, ref.UID)
		case ownerWaiting:
			waiting = true
			gone = append(gone, ref.UID)
		}
	}
	switch {
	case len(solid) > 0 && len(gone) > 0:
		return recheck, s.removeOwnerRefs(ctx, o, gone...)
	case len(solid) > 0:
		return recheck, nil
	case waiting && s.hasDependents(o.Cluster, o.UID):
		// Deleted in the foreground too; its own dependents must not
		// block it on a cycle back to the owner.
		if err := s.unblock(ctx, o); err != nil {
			return 0, err
		}
		return 0, s.delete(ctx, o, metav1.DeletePropagationForeground)
	}
	policy := metav1.DeletePropagationBackground
	switch {
	case slices.Contains(finalizers, metav1.FinalizerOrphanDependents):
		policy = metav1.DeletePropagationOrphan
	case slices.Contains(finalizers, metav1.FinalizerDeleteDependents):
		policy = metav1.DeletePropagationForeground
	}
	return 0, s.delete(ctx, o, policy)
}
