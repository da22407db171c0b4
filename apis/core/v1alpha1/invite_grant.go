package v1alpha1

import (
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// InviteGrant is the RoleAssignment an Invite turns into once user
// accepted it (or at once for an invitation by user name): user gets the
// Invite's role in the Invite's workspace. The Invite owns it (controller
// reference), so deleting the Invite deletes the grant.
func InviteGrant(inv *Invite, user string) *RoleAssignment {
	isController := true
	return &RoleAssignment{
		TypeMeta: metav1.TypeMeta{APIVersion: SchemeGroupVersion.String(), Kind: "RoleAssignment"},
		ObjectMeta: metav1.ObjectMeta{
			Name:   InviteRoleAssignmentName(inv.Name),
			Labels: map[string]string{InviteLabelKey: inv.Name},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: SchemeGroupVersion.String(), Kind: "Invite", Name: inv.Name, UID: inv.UID, Controller: &isController,
			}},
		},
		Spec: RoleAssignmentSpec{Subject: Subject{Kind: SubjectKindUser, Name: user}, Role: inv.InviteRole()},
	}
}

// GrantOf reports whether ra is the grant inv turned into (it names inv,
// by uid, as its controller).
func GrantOf(ra *RoleAssignment, inv *Invite) bool {
	ref := metav1.GetControllerOfNoCopy(ra)
	return ref != nil && ref.UID == inv.UID && ref.Kind == "Invite" && ref.Name == inv.Name
}

// InviteOpen reports whether inv may still be accepted at now: not being
// deleted, not expired, and not accepted or expired by its status (a
// status that says so only ever closes an invitation).
func InviteOpen(inv *Invite, now time.Time) bool {
	if !inv.DeletionTimestamp.IsZero() || !now.Before(inv.Expiry()) {
		return false
	}
	c := meta.FindStatusCondition(inv.Status.Conditions, ConditionAccepted)
	return c == nil || (c.Status != metav1.ConditionTrue && c.Reason != ReasonExpired)
}
