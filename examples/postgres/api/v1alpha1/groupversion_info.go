// Package v1alpha1 is the PostgreSQL example's API, postgres.examples.meshplane.io/v1alpha1:
// a Database a consumer orders from the provider.
//
// +kubebuilder:object:generate=true
// +groupName=postgres.examples.meshplane.io
package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

const (
	// GroupName is the API group.
	GroupName = "postgres.examples.meshplane.io"
	// Resource is the plural resource name of Database.
	Resource = "databases"
)

var (
	// GroupVersion is postgres.examples.meshplane.io/v1alpha1.
	GroupVersion = schema.GroupVersion{Group: GroupName, Version: "v1alpha1"}
	// SchemeBuilder registers the types with a scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}
	// AddToScheme adds the types to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)
