package v1alpha1

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// DefaultInviteLifetime is how long an Invite without spec.expiresAt may
// be accepted, from its creation.
const DefaultInviteLifetime = 7 * 24 * time.Hour

// Invite condition type and reasons.
const (
	// ConditionAccepted: True once the invitation became a grant (a
	// RoleAssignment it owns); False with reason Pending (waiting for the
	// invitee) or Expired (never becomes one).
	ConditionAccepted = "Accepted"
	// ReasonAccepted: the invitee holds the role.
	ReasonAccepted = "Accepted"
	// ReasonExpired: the invitation was not accepted before it expired.
	ReasonExpired = "Expired"
)

// InviteLabelKey labels the RoleAssignment an Invite turned into with the
// Invite's name.
const InviteLabelKey = "core.platform-mesh.io/invite"

// InviteSpec says whom the invitation is for and which role it gives.
//
// +kubebuilder:validation:XValidation:rule="has(self.email) != has(self.user)",message="exactly one of email and user is required"
type InviteSpec struct {
	// email is the invitee's e-mail address (Platform Mesh's field). The
	// invitation turns into a grant for the first user who signs in with a
	// verified e-mail claim of this address (see docs/authorization.md).
	// +optional
	// +kubebuilder:validation:MaxLength=254
	// +kubebuilder:validation:Pattern=`^[a-zA-Z0-9!#$%&'*+/=?^_{|}~.-]+@[a-zA-Z0-9-]+(\.[a-zA-Z0-9-]+)*$`
	Email string `json:"email,omitempty"`
	// user is the invitee's user name as the core authenticates it (e.g.
	// bob, or oidc:bob): the invitation turns into a grant at once.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	User string `json:"user,omitempty"`
	// role the invitee gets on the account of the workspace the Invite is
	// in: owner, member (the default), or a role a provider's model adds.
	// +optional
	// +kubebuilder:default=member
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=50
	// +kubebuilder:validation:Pattern=`^[a-z][a-z0-9_]*$`
	Role string `json:"role,omitempty"`
	// expiresAt is when the invitation can no longer be accepted (default:
	// 7 days after its creation). A grant it already became stays.
	// +optional
	ExpiresAt *metav1.Time `json:"expiresAt,omitempty"`
}

// InviteStatus is what the platform wrote.
type InviteStatus struct {
	// conditions: Accepted (True, or False with reason Pending or Expired).
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// expiresAt is when the invitation expires (spec.expiresAt or its
	// default).
	// +optional
	ExpiresAt *metav1.Time `json:"expiresAt,omitempty"`
	// acceptedBy is the user the invitation became a grant for.
	// +optional
	AcceptedBy string `json:"acceptedBy,omitempty"`
	// roleAssignment names the RoleAssignment the invitation became.
	// +optional
	RoleAssignment string `json:"roleAssignment,omitempty"`
}

// Invite invites a user, by user name or e-mail address, into the
// organization or account of the workspace it lives in, with a role. It
// turns into a RoleAssignment it owns (deleting the Invite revokes the
// grant). Owners create and delete them, members list them.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster
// +kubebuilder:printcolumn:name="Email",type=string,JSONPath=`.spec.email`
// +kubebuilder:printcolumn:name="User",type=string,JSONPath=`.spec.user`
// +kubebuilder:printcolumn:name="Role",type=string,JSONPath=`.spec.role`
// +kubebuilder:printcolumn:name="State",type=string,JSONPath=`.status.conditions[?(@.type=="Accepted")].reason`
// +kubebuilder:printcolumn:name="Accepted By",type=string,JSONPath=`.status.acceptedBy`,priority=1
// +kubebuilder:printcolumn:name="Expires",type=string,JSONPath=`.status.expiresAt`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Invite struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec cannot change: delete the Invite and invite again.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec is immutable: delete the Invite and invite again"
	Spec   InviteSpec   `json:"spec,omitempty"`
	Status InviteStatus `json:"status,omitempty"`
}

// InviteList is a list of Invites.
//
// +kubebuilder:object:root=true
type InviteList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Invite `json:"items"`
}

// GetConditions returns the status conditions.
func (i *Invite) GetConditions() []metav1.Condition { return i.Status.Conditions }

// SetConditions replaces the status conditions.
func (i *Invite) SetConditions(c []metav1.Condition) { i.Status.Conditions = c }

// Expiry is when the invitation expires: spec.expiresAt, or
// DefaultInviteLifetime after its creation.
func (i *Invite) Expiry() time.Time {
	if i.Spec.ExpiresAt != nil {
		return i.Spec.ExpiresAt.Time
	}
	return i.CreationTimestamp.Add(DefaultInviteLifetime)
}

// InviteRole is the role an Invite gives (member when spec.role is empty).
func (i *Invite) InviteRole() string {
	if i.Spec.Role == "" {
		return RoleMember
	}
	return i.Spec.Role
}

// InviteRoleAssignmentName is the name of the RoleAssignment an Invite
// turns into.
func InviteRoleAssignmentName(invite string) string { return "invite-" + invite }
