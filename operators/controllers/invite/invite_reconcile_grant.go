package invite

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/log"

	corev1alpha1 "github.com/meshplane/meshplane/apis/core/v1alpha1"
)

// grant is the Invite's one step: its grant (RoleAssignment
// invite-<name>, owned by the Invite) is looked at, and status says what
// happened:
//   - the grant exists: Accepted, acceptedBy its subject;
//   - it existed (status says Accepted) and was deleted: stays Accepted,
//     nothing is granted again (the owner removed the invitee);
//   - expired: Expired, nothing is ever granted;
//   - an invitation by user name: the grant is created (Accepted);
//   - by e-mail address: Pending until the rebac-authz-webhook sees the
//     invitee sign in and creates the grant, looked at again at expiry.
//
// A status claiming Accepted or Expired only ever stops a grant: no
// status field makes one.
func (r *reconciler) grant(ctx context.Context, cluster string, inv *corev1alpha1.Invite) (time.Duration, error) {
	expiry := inv.Expiry()
	inv.Status.ExpiresAt = &metav1.Time{Time: expiry.UTC().Truncate(time.Second)}
	name := corev1alpha1.InviteRoleAssignmentName(inv.Name)
	ra, err := r.getGrant(ctx, cluster, name)
	if err != nil {
		return 0, fmt.Errorf("reading the grant: %w", err)
	}
	if ra != nil && !corev1alpha1.GrantOf(ra, inv) {
		setAccepted(inv, metav1.ConditionFalse, corev1alpha1.ReasonError,
			fmt.Sprintf("RoleAssignment %s exists and is not this invitation's: delete it or invite under another name", name))
		return time.Minute, nil
	}
	if ra != nil {
		accepted(inv, ra)
		return 0, nil
	}
	if c := meta.FindStatusCondition(inv.Status.Conditions, corev1alpha1.ConditionAccepted); c != nil && c.Status == metav1.ConditionTrue {
		c.Message = fmt.Sprintf("accepted by %s; its RoleAssignment %s was deleted, so the invitation grants nothing any more", inv.Status.AcceptedBy, name)
		inv.Status.RoleAssignment = ""
		return 0, nil
	}
	now := r.now()
	if !corev1alpha1.InviteOpen(inv, now) {
		setAccepted(inv, metav1.ConditionFalse, corev1alpha1.ReasonExpired,
			fmt.Sprintf("the invitation expired at %s without being accepted; it grants nothing", expiry.UTC().Format(time.RFC3339)))
		return 0, nil
	}
	if inv.Spec.User == "" {
		setAccepted(inv, metav1.ConditionFalse, corev1alpha1.ReasonPending,
			fmt.Sprintf("waiting for the first sign-in with the verified e-mail address %s (until %s)", inv.Spec.Email, expiry.UTC().Format(time.RFC3339)))
		return expiry.Sub(now) + time.Second, nil
	}
	ra = corev1alpha1.InviteGrant(inv, inv.Spec.User)
	if err := r.createGrant(ctx, cluster, ra); err != nil && !apierrors.IsAlreadyExists(err) {
		setAccepted(inv, metav1.ConditionFalse, corev1alpha1.ReasonError, fmt.Sprintf("creating RoleAssignment %s: %v", name, err))
		return 0, fmt.Errorf("creating the grant: %w", err)
	}
	log.FromContext(ctx).Info("invitation by user name turned into a grant", "user", inv.Spec.User, "role", inv.InviteRole())
	accepted(inv, ra)
	return 0, nil
}

func accepted(inv *corev1alpha1.Invite, ra *corev1alpha1.RoleAssignment) {
	inv.Status.AcceptedBy, inv.Status.RoleAssignment = ra.Spec.Subject.Name, ra.Name
	setAccepted(inv, metav1.ConditionTrue, corev1alpha1.ReasonAccepted,
		fmt.Sprintf("%s holds role %s through RoleAssignment %s", ra.Spec.Subject.Name, ra.Spec.Role, ra.Name))
}
