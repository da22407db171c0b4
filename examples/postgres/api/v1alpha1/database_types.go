package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// DatabaseSpec is what the consumer orders.
type DatabaseSpec struct {
	// Owner is the name of the role that owns the database; the role on
	// the server is this name prefixed per workspace (status.roleName).
	// +kubebuilder:validation:Pattern=`^[a-z][a-z0-9_]{0,20}$`
	Owner string `json:"owner"`
	// Extensions to create in the database (from the server's available
	// extensions, e.g. pgcrypto, citext, hstore).
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:Pattern=`^[a-z][a-z0-9_]{0,62}$`
	Extensions []string `json:"extensions,omitempty"`
}

// Phases of a Database.
const (
	PhasePending  = "Pending"
	PhaseReady    = "Ready"
	PhaseFailed   = "Failed"
	PhaseDeleting = "Deleting"
)

// Condition types.
const (
	// ConditionDatabase: the role and the database exist.
	ConditionDatabase = "DatabaseReady"
	// ConditionExtensions: every extension of the spec is created.
	ConditionExtensions = "ExtensionsReady"
	// ConditionCredentials: the credentials Secret is in the consumer's namespace.
	ConditionCredentials = "CredentialsReady"
	// ConditionReady: all of the above.
	ConditionReady = "Ready"
)

// DatabaseStatus is what the provider reports back.
type DatabaseStatus struct {
	// Phase is Pending, Ready, Failed or Deleting.
	// +optional
	Phase string `json:"phase,omitempty"`
	// ObservedGeneration is the generation last reconciled.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Conditions: DatabaseReady, ExtensionsReady, CredentialsReady, Ready.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// DatabaseName and RoleName on the server (derived from the logical
	// cluster, the namespace and the name).
	// +optional
	DatabaseName string `json:"databaseName,omitempty"`
	// +optional
	RoleName string `json:"roleName,omitempty"`
	// SecretName holds host, port, database, username, password and uri.
	// +optional
	SecretName string `json:"secretName,omitempty"`
}

// Database is a PostgreSQL database with its owner role.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=databases,scope=Namespaced
// +kubebuilder:printcolumn:name="Owner",type=string,JSONPath=`.spec.owner`
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Database",type=string,JSONPath=`.status.databaseName`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Database struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   DatabaseSpec   `json:"spec"`
	Status DatabaseStatus `json:"status,omitempty"`
}

// DatabaseList is a list of Databases.
//
// +kubebuilder:object:root=true
type DatabaseList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Database `json:"items"`
}

func init() {
	SchemeBuilder.Register(&Database{}, &DatabaseList{})
}
