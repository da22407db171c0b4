package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

const (
	// GroupName is the API group of every type in this package.
	GroupName = "core.platform-mesh.io"
	// Version is the API version of every type in this package.
	Version = "v1alpha1"

	// AccountKind is the kind of Account.
	AccountKind = "Account"
	// AccountInfoKind is the kind of AccountInfo.
	AccountInfoKind = "AccountInfo"
	// StoreKind is the kind of Store.
	StoreKind = "Store"
	// AuthorizationModelKind is the kind of AuthorizationModel.
	AuthorizationModelKind = "AuthorizationModel"

	// AccountResource is the plural resource name of Account.
	AccountResource = "accounts"
	// AccountInfoResource is the plural resource name of AccountInfo.
	AccountInfoResource = "accountinfos"
	// StoreResource is the plural resource name of Store.
	StoreResource = "stores"
	// AuthorizationModelResource is the plural resource name of AuthorizationModel.
	AuthorizationModelResource = "authorizationmodels"
)

var (
	// SchemeGroupVersion is core.platform-mesh.io/v1alpha1.
	SchemeGroupVersion = schema.GroupVersion{Group: GroupName, Version: Version}

	// SchemeBuilder registers the types of this package with a scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)
	// AddToScheme adds the types of this package to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

// Resource returns the GroupResource of resource in this group.
func Resource(resource string) schema.GroupResource {
	return SchemeGroupVersion.WithResource(resource).GroupResource()
}

// Kind returns the GroupKind of kind in this group.
func Kind(kind string) schema.GroupKind {
	return SchemeGroupVersion.WithKind(kind).GroupKind()
}

func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(SchemeGroupVersion,
		&Account{}, &AccountList{},
		&AccountInfo{}, &AccountInfoList{},
		&Store{}, &StoreList{},
		&AuthorizationModel{}, &AuthorizationModelList{},
		&RoleAssignment{}, &RoleAssignmentList{},
		&Invite{}, &InviteList{},
	)
	metav1.AddToGroupVersion(scheme, SchemeGroupVersion)
	return nil
}
