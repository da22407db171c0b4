// Package builtin holds the scheme of the APIs every logical cluster
// serves: the Kubernetes APIs and kcp's tenancy.kcp.io and core.kcp.io. Meshplane stores and serves the published v1 types
// directly: each type is registered under its external version and, as the
// same Go type, under the internal version, so the apiserver's conversion
// between the two is a copy.
package builtin

import (
	apisv1alpha1 "github.com/kcp-dev/sdk/apis/apis/v1alpha1"
	apisv1alpha2 "github.com/kcp-dev/sdk/apis/apis/v1alpha2"
	corev1alpha1 "github.com/kcp-dev/sdk/apis/core/v1alpha1"
	tenancyv1alpha1 "github.com/kcp-dev/sdk/apis/tenancy/v1alpha1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
)

// GroupVersions are the built-in API versions, in discovery order.
var GroupVersions = []schema.GroupVersion{
	corev1.SchemeGroupVersion,
	rbacv1.SchemeGroupVersion,
	coordinationv1.SchemeGroupVersion,
	eventsv1.SchemeGroupVersion,
	admissionregistrationv1.SchemeGroupVersion,
	authenticationv1.SchemeGroupVersion,
	authorizationv1.SchemeGroupVersion,
	certificatesv1.SchemeGroupVersion,
	tenancyv1alpha1.SchemeGroupVersion,
	corev1alpha1.SchemeGroupVersion,
	apisv1alpha2.SchemeGroupVersion,
	apisv1alpha1.SchemeGroupVersion,
}

var (
	// Scheme knows every built-in type.
	Scheme = runtime.NewScheme()
	// Codecs serializes built-in types (JSON, YAML, protobuf, CBOR).
	Codecs = serializer.NewCodecFactory(Scheme)
	// ParameterCodec decodes query parameters.
	ParameterCodec = runtime.NewParameterCodec(Scheme)
)

func init() {
	utilruntime.Must(AddToScheme(Scheme))
}

// AddToScheme registers the built-in types, external and internal.
func AddToScheme(s *runtime.Scheme) error {
	for _, add := range []func(*runtime.Scheme) error{
		corev1.AddToScheme,
		rbacv1.AddToScheme,
		coordinationv1.AddToScheme,
		eventsv1.AddToScheme,
		admissionregistrationv1.AddToScheme,
		authenticationv1.AddToScheme,
		authorizationv1.AddToScheme,
		certificatesv1.AddToScheme,
		tenancyv1alpha1.AddToScheme,
		corev1alpha1.AddToScheme,
		apisv1alpha2.AddToScheme,
		apisv1alpha1.AddToScheme,
	} {
		if err := add(s); err != nil {
			return err
		}
	}
	for _, gv := range GroupVersions {
		internal := schema.GroupVersion{Group: gv.Group, Version: runtime.APIVersionInternal}
		for kind, t := range s.KnownTypes(gv) {
			if _, isMeta := metaKinds[kind]; isMeta || s.Recognizes(internal.WithKind(kind)) {
				continue // the first version listed provides the internal type
			}
			obj, ok := reflectNew(t)
			if !ok {
				continue
			}
			s.AddKnownTypeWithName(internal.WithKind(kind), obj)
		}
	}
	if err := s.SetVersionPriority(apisv1alpha2.SchemeGroupVersion, apisv1alpha1.SchemeGroupVersion); err != nil {
		return err
	}
	addDefaults(s)
	metav1.AddToGroupVersion(s, schema.GroupVersion{Version: "v1"})
	s.AddUnversionedTypes(schema.GroupVersion{Version: "v1"},
		&metav1.Status{}, &metav1.APIVersions{}, &metav1.APIGroupList{}, &metav1.APIGroup{}, &metav1.APIResourceList{})
	return addFieldLabelConversions(s)
}

// metaKinds are the option and event kinds metav1 registers in every
// version; the internal version gets them from metainternalversion.
var metaKinds = map[string]struct{}{
	"WatchEvent": {}, "ListOptions": {}, "GetOptions": {}, "DeleteOptions": {},
	"CreateOptions": {}, "UpdateOptions": {}, "PatchOptions": {}, "Status": {},
}
