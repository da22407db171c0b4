package garbagecollector

import (
	"context"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// foregroundStep handles an owner deleted with propagationPolicy
// Foreground: its dependents are deleted (each one's own reconcile sees
// the owner waiting), and the owner goes once no dependent with
// blockOwnerDeletion is left.
type foregroundStep struct {
	dependents      func(cluster string, owner types.UID) []dependent
	enqueue         func(o object)
	removeFinalizer func(ctx context.Context, o object, finalizer string) error
}

// blockedRecheck is how often an owner waiting for dependents looks again
// even without events (the dependents' deletions enqueue it too).
const blockedRecheck = 5 * time.Second

func (s foregroundStep) reconcile(ctx context.Context, owner object) (time.Duration, error) {
	blocking := 0
	for _, d := range s.dependents(owner.Cluster, owner.UID) {
		s.enqueue(d.object)
		if d.block {
			blocking++
		}
	}
	if blocking > 0 {
		return blockedRecheck, nil
	}
	return 0, s.removeFinalizer(ctx, owner, metav1.FinalizerDeleteDependents)
}
