package invite

import (
	"context"
	"fmt"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	corev1alpha1 "github.com/meshplane/meshplane/apis/core/v1alpha1"
)

// deletion deletes the grant the Invite turned into and releases the
// finalizer once it is gone (the RoleAssignment's own finalizer revokes
// its tuple first), so `kubectl delete invite` returns once the invitee
// has lost the role. A RoleAssignment of the same name the Invite does not
// own is left alone.
func (r *reconciler) deletion(ctx context.Context, cluster string, inv *corev1alpha1.Invite) (time.Duration, error) {
	if !controllerutil.ContainsFinalizer(inv, Finalizer) {
		return 0, nil
	}
	ra, err := r.getGrant(ctx, cluster, corev1alpha1.InviteRoleAssignmentName(inv.Name))
	if err != nil && !gone(err) {
		return 0, fmt.Errorf("reading the grant: %w", err)
	}
	if ra != nil && corev1alpha1.GrantOf(ra, inv) {
		if ra.DeletionTimestamp.IsZero() {
			if err := r.deleteGrant(ctx, cluster, ra); err != nil && !gone(err) {
				return 0, fmt.Errorf("deleting the grant: %w", err)
			}
			log.FromContext(ctx).Info("invitation deleted: revoking its grant", "roleAssignment", ra.Name)
		}
		// Its deletion (a watched owned object) brings the Invite back.
		return 2 * time.Second, nil
	}
	controllerutil.RemoveFinalizer(inv, Finalizer)
	if err := r.update(ctx, cluster, inv); err != nil && !gone(err) {
		return 0, fmt.Errorf("releasing finalizer: %w", err)
	}
	return 0, nil
}
