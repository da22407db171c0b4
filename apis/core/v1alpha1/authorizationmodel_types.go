package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// WorkspaceStoreRef names a Store in a workspace.
type WorkspaceStoreRef struct {
	// name is the name of the Store.
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
	// cluster is the logical cluster (or workspace path) holding the Store.
	// +kubebuilder:validation:MinLength=1
	Cluster string `json:"cluster"`
	// path is the older name of cluster, kept so objects written with it
	// still decode. Deprecated: use cluster.
	// +optional
	Path string `json:"path,omitempty"`
}

// AuthorizationModelSpec is the desired state of an AuthorizationModel.
type AuthorizationModelSpec struct {
	// storeRef is the Store whose model this module extends.
	// +required
	StoreRef WorkspaceStoreRef `json:"storeRef"`
	// model is a module in the OpenFGA modelling language, merged into the
	// store's model.
	// +required
	// +kubebuilder:validation:MinLength=1
	Model string `json:"model"`
	// tuples are written to the referenced store.
	// +optional
	Tuples []Tuple `json:"tuples,omitempty"`
}

// AuthorizationModelStatus is the observed state of an AuthorizationModel.
type AuthorizationModelStatus struct {
	// conditions describe the reconcile steps; Ready is True once the module
	// is part of the store's model and the tuples are written.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// managedTuples are the tuples the operator wrote and will delete.
	// +optional
	ManagedTuples []Tuple `json:"managedTuples,omitempty"`
}

// AuthorizationModel is a module of an OpenFGA authorization model, added
// to the model of the Store it references. The security-operator creates
// one per bound API and organization.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster
// +kubebuilder:printcolumn:name="Store",type=string,JSONPath=`.spec.storeRef.name`
// +kubebuilder:printcolumn:name="Cluster",type=string,JSONPath=`.spec.storeRef.cluster`,priority=1
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type AuthorizationModel struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   AuthorizationModelSpec   `json:"spec,omitempty"`
	Status AuthorizationModelStatus `json:"status,omitempty"`
}

// AuthorizationModelList is a list of AuthorizationModels.
//
// +kubebuilder:object:root=true
type AuthorizationModelList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []AuthorizationModel `json:"items"`
}

// GetConditions returns the status conditions.
func (m *AuthorizationModel) GetConditions() []metav1.Condition { return m.Status.Conditions }

// SetConditions replaces the status conditions.
func (m *AuthorizationModel) SetConditions(c []metav1.Condition) { m.Status.Conditions = c }
