package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Role names the model gives every account.
const (
	RoleOwner  = "owner"
	RoleMember = "member"
)

// Subject kinds: a user, or every member of a group, named as the core
// authenticates them.
const (
	SubjectKindUser  = "User"
	SubjectKindGroup = "Group"
)

// Subject is who a RoleAssignment gives its role to.
type Subject struct {
	// kind of the subject: User or Group.
	// +kubebuilder:validation:Enum=User;Group
	Kind string `json:"kind"`
	// name is the user's or group's name as the core authenticates it
	// (e.g. alice, or an OIDC user or group with its prefix).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
}

// RoleAssignmentSpec is the grant.
type RoleAssignmentSpec struct {
	// subject receives the role.
	// +required
	Subject Subject `json:"subject"`
	// role is a relation of the account in the organization's model that a
	// user may hold directly: owner, member, or a role a provider's model
	// adds to core_platform-mesh_io_account.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=50
	// +kubebuilder:validation:Pattern=`^[a-z][a-z0-9_]*$`
	Role string `json:"role"`
}

// RoleAssignmentStatus is what the security-operator wrote.
type RoleAssignmentStatus struct {
	// conditions: Ready is True once the grant is in the organization's
	// OpenFGA store.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// tuple is the relationship written for the grant (deleted when the
	// RoleAssignment is deleted or its spec changes).
	// +optional
	Tuple *Tuple `json:"tuple,omitempty"`
}

// RoleAssignment gives a subject a role on the account of the workspace it
// lives in (an organization's or an account's workspace). The account and
// its organization come from where the object is, never from a field.
// Owners create and delete them, members list them.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster
// +kubebuilder:printcolumn:name="Kind",type=string,JSONPath=`.spec.subject.kind`,priority=1
// +kubebuilder:printcolumn:name="Subject",type=string,JSONPath=`.spec.subject.name`
// +kubebuilder:printcolumn:name="Role",type=string,JSONPath=`.spec.role`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type RoleAssignment struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   RoleAssignmentSpec   `json:"spec,omitempty"`
	Status RoleAssignmentStatus `json:"status,omitempty"`
}

// RoleAssignmentList is a list of RoleAssignments.
//
// +kubebuilder:object:root=true
type RoleAssignmentList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []RoleAssignment `json:"items"`
}

// GetConditions returns the status conditions.
func (r *RoleAssignment) GetConditions() []metav1.Condition { return r.Status.Conditions }

// SetConditions replaces the status conditions.
func (r *RoleAssignment) SetConditions(c []metav1.Condition) { r.Status.Conditions = c }
