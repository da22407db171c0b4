package roleassignment

import (
	"context"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/log"

	corev1alpha1 "github.com/meshplane/meshplane/apis/core/v1alpha1"
)

// deletionStep revokes the grant: the tuple its spec makes and the one its
// status records, each only if it is a grant on this workspace's account
// that no other RoleAssignment of the workspace makes. The founder's owner
// tuples (an owner role) and parent links never have that shape.
type deletionStep struct {
	write func(ctx context.Context, storeID string, add, remove []corev1alpha1.Tuple) error
}

func (d *deletionStep) reconcile(ctx context.Context, s *state) result {
	var remove []corev1alpha1.Tuple
	if want := s.want(); s.revocable(want) {
		remove = append(remove, want)
	}
	if t := s.ra.Status.Tuple; t != nil && *t != s.want() && s.revocable(*t) {
		remove = append(remove, *t)
	}
	if len(remove) == 0 {
		return next
	}
	if err := d.write(ctx, s.storeID, nil, remove); err != nil {
		log.FromContext(ctx).Error(err, "revoking the grant")
		return wait(5 * time.Second)
	}
	log.FromContext(ctx).Info("role revoked", "tuples", len(remove))
	return next
}
