package v1alpha1

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// StoreRefLabelKey labels objects with the name of the Store they belong to.
const StoreRefLabelKey = "core.platform-mesh.io/store-name"

// Tuple is one OpenFGA relationship tuple: user has relation to object.
type Tuple struct {
	// object is the object of the tuple, "<type>:<id>".
	// +kubebuilder:validation:MinLength=1
	Object string `json:"object"`
	// relation is the relation between user and object.
	// +kubebuilder:validation:MinLength=1
	Relation string `json:"relation"`
	// user is the subject: "<type>:<id>" or a userset "<type>:<id>#<relation>".
	// +kubebuilder:validation:MinLength=1
	User string `json:"user"`
}

// String renders the tuple as "object#relation@user", OpenFGA's notation.
func (t Tuple) String() string {
	return fmt.Sprintf("%s#%s@%s", t.Object, t.Relation, t.User)
}

// StoreSpec is the desired state of a Store.
type StoreSpec struct {
	// coreModule is the core of the authorization model in the OpenFGA
	// modelling language; AuthorizationModels referencing the store add
	// modules to it.
	// +required
	// +kubebuilder:validation:MinLength=1
	CoreModule string `json:"coreModule"`

	// tuples are written to the store and deleted from it when they are
	// removed here or the Store is deleted.
	// +optional
	Tuples []Tuple `json:"tuples,omitempty"`
}

// StoreStatus is the observed state of a Store.
type StoreStatus struct {
	// conditions describe the reconcile steps; Ready is True once the store,
	// its model and its tuples are written.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// storeId is the ID of the OpenFGA store.
	// +optional
	StoreID string `json:"storeId,omitempty"`

	// authorizationModelId is the ID of the authorization model last written.
	// +optional
	AuthorizationModelID string `json:"authorizationModelId,omitempty"`

	// managedTuples are the tuples the operator wrote and will delete.
	// +optional
	ManagedTuples []Tuple `json:"managedTuples,omitempty"`
}

// Store is an OpenFGA store, one per organization, named after it. The
// security-operator creates the store, writes the authorization model built
// from coreModule and the AuthorizationModels that reference it, and manages
// the tuples.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster
// +kubebuilder:printcolumn:name="Store ID",type=string,JSONPath=`.status.storeId`
// +kubebuilder:printcolumn:name="Model ID",type=string,JSONPath=`.status.authorizationModelId`,priority=1
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Store struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   StoreSpec   `json:"spec,omitempty"`
	Status StoreStatus `json:"status,omitempty"`
}

// StoreList is a list of Stores.
//
// +kubebuilder:object:root=true
type StoreList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Store `json:"items"`
}

// GetConditions returns the status conditions.
func (s *Store) GetConditions() []metav1.Condition { return s.Status.Conditions }

// SetConditions replaces the status conditions.
func (s *Store) SetConditions(c []metav1.Condition) { s.Status.Conditions = c }
