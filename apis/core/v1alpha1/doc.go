// Package v1alpha1 holds the core.platform-mesh.io/v1alpha1 API types that
// Meshplane's operators share: Account and AccountInfo (account-operator),
// Store and AuthorizationModel (security-operator).
//
// The group, kinds, field names and JSON tags match Platform Mesh's, so
// objects written by Platform Mesh's operators and clients decode here and
// the other way round.
//
// +kubebuilder:object:generate=true
// +groupName=core.platform-mesh.io
package v1alpha1
