package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// AccountInfoName is the name of the one AccountInfo in every account workspace.
const AccountInfoName = "account"

// AccountLocation says where an account lives.
type AccountLocation struct {
	// name is the name of the Account object (and of its workspace).
	Name string `json:"name"`
	// generatedClusterId is the logical cluster of the workspace created for
	// the account.
	GeneratedClusterID string `json:"generatedClusterId"`
	// originClusterId is the logical cluster holding the Account object that
	// led to the workspace.
	OriginClusterID string `json:"originClusterId"`
	// path is the workspace path of the account's workspace, e.g. root:orgs:acme.
	Path string `json:"path"`
	// url is the URL of the account's workspace.
	URL string `json:"url"`
	// type is the type of the account.
	Type AccountType `json:"type"`
}

// FGAInfo points at the authorization data of the account's organization.
type FGAInfo struct {
	// store is the OpenFGA store of the organization.
	Store StoreInfo `json:"store"`
}

// StoreInfo identifies an OpenFGA store.
type StoreInfo struct {
	// id is the OpenFGA store ID.
	ID string `json:"id"`
}

// ClusterInfo tells clients how to reach the platform.
type ClusterInfo struct {
	// ca is the PEM CA bundle that signs the platform's serving certificate.
	CA string `json:"ca"`
}

// OIDCInfo is the OIDC configuration of the account's organization.
type OIDCInfo struct {
	// issuerUrl is the URL of the OIDC issuer.
	IssuerURL string `json:"issuerUrl"`
	// clients are the OIDC clients, by name.
	Clients map[string]ClientInfo `json:"clients"`
}

// ClientInfo is one OIDC client.
type ClientInfo struct {
	// clientId is the OIDC client ID.
	ClientID string `json:"clientId"`
}

// AccountInfoSpec describes an account workspace: the account itself, its
// parent and organization, and where authorization data lives.
type AccountInfoSpec struct {
	// fga points at the organization's OpenFGA store.
	// +required
	FGA FGAInfo `json:"fga"`
	// account is the account this workspace belongs to.
	// +required
	Account AccountLocation `json:"account"`
	// parentAccount is the parent account; unset for an organization.
	// +optional
	ParentAccount *AccountLocation `json:"parentAccount,omitempty"`
	// organization is the organization the account belongs to (the account
	// itself for an organization).
	// +required
	Organization AccountLocation `json:"organization"`
	// clusterInfo tells clients how to reach the platform.
	// +required
	ClusterInfo ClusterInfo `json:"clusterInfo"`
	// oidc is the organization's OIDC configuration.
	// +optional
	OIDC *OIDCInfo `json:"oidc,omitempty"`
}

// AccountInfoStatus is the observed state of an AccountInfo. It has no
// fields yet.
type AccountInfoStatus struct{}

// AccountInfo describes the account workspace it lives in. The
// account-operator writes exactly one, named "account", into every account
// workspace.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=accountinfos,scope=Cluster
// +kubebuilder:printcolumn:name="Account",type=string,JSONPath=`.spec.account.name`
// +kubebuilder:printcolumn:name="Organization",type=string,JSONPath=`.spec.organization.name`
// +kubebuilder:printcolumn:name="Path",type=string,JSONPath=`.spec.account.path`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type AccountInfo struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   AccountInfoSpec   `json:"spec,omitempty"`
	Status AccountInfoStatus `json:"status,omitempty"`
}

// AccountInfoList is a list of AccountInfos.
//
// +kubebuilder:object:root=true
type AccountInfoList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []AccountInfo `json:"items"`
}
