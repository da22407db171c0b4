package namespacelifecycle

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// metav1StatusCause marks the refusal as kube does, so clients can tell a
// terminating namespace from other denials.
func metav1StatusCause() metav1.StatusCause {
	return metav1.StatusCause{
		Type:    corev1.NamespaceTerminatingCause,
		Message: "namespace is being terminated",
		Field:   "metadata.namespace",
	}
}
