// Package kubecluster is the example's mount type and its controller: a
// KubeCluster names a Secret holding a kubeconfig of the API to mount; the
// controller checks that API, hands it to the proxy and reports
// status.URL (the proxy's URL for it) and status.phase.
package kubecluster

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Resource is the KubeCluster resource.
var Resource = schema.GroupVersionResource{Group: "mounts.examples.meshplane.io", Version: "v1alpha1", Resource: "kubeclusters"}

// IsMountAnnotation marks an object as a mount for the core.
const IsMountAnnotation = "experimental.tenancy.kcp.io/is-mount"

// ClusterAnnotation holds the logical cluster of every object the core
// serves.
const ClusterAnnotation = "kcp.io/cluster"

// KubeconfigKey is the key of the Secret that holds the kubeconfig.
const KubeconfigKey = "kubeconfig"

// Phases of a mount, as the core reads them.
const (
	PhaseInitializing = "Initializing"
	PhaseConnecting   = "Connecting"
	PhaseReady        = "Ready"
)

// KubeCluster is the example's mount object.
type KubeCluster struct {
	Name string
	Spec struct {
		SecretRef struct {
			Namespace string `json:"namespace"`
			Name      string `json:"name"`
		} `json:"secretRef"`
	} `json:"spec"`
	Status Status `json:"status"`
}

// Status is what the core reads: URL and phase.
type Status struct {
	URL     string `json:"URL,omitempty"`
	Phase   string `json:"phase,omitempty"`
	Message string `json:"message,omitempty"`
}
