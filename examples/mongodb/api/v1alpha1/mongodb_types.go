package v1alpha1

import (
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// MongoDBSpec is what the consumer orders.
type MongoDBSpec struct {
	// Version of MongoDB, e.g. "7.0.12".
	// +kubebuilder:validation:Pattern=`^[0-9]+\.[0-9]+(\.[0-9]+)?$`
	Version string `json:"version"`
	// Members of the replica set.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=7
	// +kubebuilder:default=3
	// +optional
	Members int32 `json:"members,omitempty"`
	// StorageSize of each member's volume, e.g. "10Gi".
	StorageSize resource.Quantity `json:"storageSize"`
}

// Phases of a MongoDB.
const (
	PhasePending  = "Pending"
	PhaseCreating = "Creating"
	PhaseReady    = "Ready"
	PhaseFailed   = "Failed"
	PhaseDeleting = "Deleting"
)

// Condition types.
const (
	// ConditionSynced: the downstream object matches the spec.
	ConditionSynced = "Synced"
	// ConditionConnectionSecret: the connection Secret is in the consumer's namespace.
	ConditionConnectionSecret = "ConnectionSecretReady"
	// ConditionReady: the replica set runs and the Secret is written.
	ConditionReady = "Ready"
)

// Connection says how to reach the database; the credentials are in the
// Secret SecretName in the MongoDB's namespace.
type Connection struct {
	// Host and Port of the replica set's service.
	Host string `json:"host,omitempty"`
	Port int32  `json:"port,omitempty"`
	// ReplicaSet name.
	ReplicaSet string `json:"replicaSet,omitempty"`
	// SecretName holds username, password and uri.
	SecretName string `json:"secretName,omitempty"`
}

// MongoDBStatus is what the provider reports back.
type MongoDBStatus struct {
	// Phase is Pending, Creating, Ready, Failed or Deleting.
	// +optional
	Phase string `json:"phase,omitempty"`
	// ObservedGeneration is the generation last synced downstream.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Conditions: Synced, ConnectionSecretReady, Ready.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// Connection details, once the replica set runs.
	// +optional
	Connection *Connection `json:"connection,omitempty"`
}

// MongoDB is a MongoDB replica set a consumer orders from the provider.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=mongodbs,scope=Namespaced
// +kubebuilder:printcolumn:name="Version",type=string,JSONPath=`.spec.version`
// +kubebuilder:printcolumn:name="Members",type=integer,JSONPath=`.spec.members`
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Host",type=string,JSONPath=`.status.connection.host`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type MongoDB struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   MongoDBSpec   `json:"spec"`
	Status MongoDBStatus `json:"status,omitempty"`
}

// MongoDBList is a list of MongoDBs.
//
// +kubebuilder:object:root=true
type MongoDBList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []MongoDB `json:"items"`
}

func init() {
	SchemeBuilder.Register(&MongoDB{}, &MongoDBList{})
}
