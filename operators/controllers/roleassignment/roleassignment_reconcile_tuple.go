package roleassignment

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/log"

	corev1alpha1 "github.com/meshplane/meshplane/apis/core/v1alpha1"
)

// tupleStep writes the grant's tuple and, when the spec changed, deletes
// the one written before (if it is a grant on this account no other
// RoleAssignment of the workspace makes). status.tuple records it.
type tupleStep struct {
	write func(ctx context.Context, storeID string, add, remove []corev1alpha1.Tuple) error
}

func (t *tupleStep) reconcile(ctx context.Context, s *state) result {
	want := s.want()
	var remove []corev1alpha1.Tuple
	if old := s.ra.Status.Tuple; old != nil && *old != want && s.revocable(*old) {
		remove = append(remove, *old)
	}
	// Written at every reconcile (idempotent): after a restart each grant
	// is written again, so one lost before is back.
	if err := t.write(ctx, s.storeID, []corev1alpha1.Tuple{want}, remove); err != nil {
		setReady(s.ra, metav1.ConditionFalse, corev1alpha1.ReasonError, fmt.Sprintf("writing the grant: %v", err))
		return wait(5 * time.Second)
	}
	if s.ra.Status.Tuple == nil || *s.ra.Status.Tuple != want {
		log.FromContext(ctx).Info("role granted", "tuple", want.String(), "revoked", len(remove))
	}
	s.ra.Status.Tuple = &want
	setReady(s.ra, metav1.ConditionTrue, corev1alpha1.ReasonReconciled,
		fmt.Sprintf("%s %s holds role %s on this account", s.ra.Spec.Subject.Kind, s.ra.Spec.Subject.Name, s.ra.Spec.Role))
	return next
}
