package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// AccountType is the kind of tenant an Account stands for.
// +kubebuilder:validation:Enum=org;account
type AccountType string

const (
	// AccountTypeOrg is an organization: a top-level tenant under root:orgs
	// with its own authorization store.
	AccountTypeOrg AccountType = "org"
	// AccountTypeAccount is an account nested in an organization or in
	// another account.
	AccountTypeAccount AccountType = "account"
)

// AccountSpec is the desired state of an Account.
type AccountSpec struct {
	// type is the kind of tenant: "org" for an organization, "account" for
	// an account inside one. It picks the WorkspaceType of the account's
	// workspace.
	// +required
	Type AccountType `json:"type"`

	// displayName is the human-readable name of the account.
	// +required
	// +kubebuilder:validation:MaxLength=255
	DisplayName string `json:"displayName"`

	// description is an optional free-text description.
	// +optional
	Description string `json:"description,omitempty"`

	// creator is the user who created the account; the admission webhook
	// sets it to the requesting user. The creator becomes the account's owner.
	// +optional
	Creator *string `json:"creator,omitempty"`

	// data is free-form JSON stored with the account and not interpreted by
	// the platform.
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	Data *runtime.RawExtension `json:"data,omitempty"`
}

// AccountStatus is the observed state of an Account.
type AccountStatus struct {
	// conditions describe the reconcile steps; Ready is True once the
	// account's workspace is ready for use.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// observedGeneration is the metadata.generation the status was computed for.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// nextReconcileTime is when the operator plans to look at the account again.
	// +optional
	NextReconcileTime *metav1.Time `json:"nextReconcileTime,omitempty"`
}

// Account is a tenant: an organization or an account inside one. The
// account-operator gives every Account a workspace of its own, named after
// the Account, in the Account's workspace.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster
// +kubebuilder:printcolumn:name="Type",type=string,JSONPath=`.spec.type`
// +kubebuilder:printcolumn:name="Display Name",type=string,JSONPath=`.spec.displayName`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Account struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   AccountSpec   `json:"spec,omitempty"`
	Status AccountStatus `json:"status,omitempty"`
}

// AccountList is a list of Accounts.
//
// +kubebuilder:object:root=true
type AccountList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Account `json:"items"`
}

// GetConditions returns the status conditions.
func (a *Account) GetConditions() []metav1.Condition { return a.Status.Conditions }

// SetConditions replaces the status conditions.
func (a *Account) SetConditions(c []metav1.Condition) { a.Status.Conditions = c }
