// Package apiexport holds what API sharing is built from: export
// identities, and the CRDs a consumer serves for the resources it binds.
package apiexport

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	apisv1alpha1 "github.com/kcp-dev/sdk/apis/apis/v1alpha1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// IdentityAnnotation carries, on a CRD made from an APIResourceSchema, the
// identity hash of the APIExport the resource is bound from.
const IdentityAnnotation = "apis.kcp.io/identity"

// IdentityNamespace holds the identity secrets of a workspace's exports.
const IdentityNamespace = "kcp-system"

// NewIdentityKey returns a fresh secret identity key.
func NewIdentityKey() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// IdentityHash is the public identity of an export: hex sha256 of its key.
func IdentityHash(key []byte) string {
	sum := sha256.Sum256(key)
	return hex.EncodeToString(sum[:])
}

// SchemaToCRD returns the CRD consumers serve for a bound resource. It is
// the same for every consumer of the schema and identity (it names no
// consumer: the cluster a binding serves it in is the key it is held
// under), so one CRD per schema resourceVersion and identity is built and
// shared by all bindings, as are its decoded OpenAPI schemas: a binding
// costs a map entry, not a CRD. The result is shared: callers must not
// modify it.
func SchemaToCRD(schema *apisv1alpha1.APIResourceSchema, identity string) (*apiextensionsv1.CustomResourceDefinition, error) {
	return sharedCRDs.get(schema, identity)
}

// buildCRD makes the CRD of a bound resource. CRDs made from the same
// schema and identity share a UID, so every consumer shares one set of
// registries.
func buildCRD(schema *apisv1alpha1.APIResourceSchema, identity string) (*apiextensionsv1.CustomResourceDefinition, error) {
	s := schema.Spec
	out := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{
			Name:            s.Names.Plural + "." + s.Group,
			UID:             types.UID(string(schema.UID) + "/" + identity),
			ResourceVersion: schema.ResourceVersion,
			Annotations:     map[string]string{IdentityAnnotation: identity},
		},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: s.Group, Names: s.Names, Scope: s.Scope,
			Conversion: &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.NoneConverter},
		},
	}
	for i := range s.Versions {
		v := &s.Versions[i]
		props, err := decodedSchemas.get(schema, v)
		if err != nil {
			return nil, fmt.Errorf("schema %s version %s: %w", schema.Name, v.Name, err)
		}
		sub := v.Subresources
		out.Spec.Versions = append(out.Spec.Versions, apiextensionsv1.CustomResourceDefinitionVersion{
			Name: v.Name, Served: v.Served, Storage: v.Storage, Deprecated: v.Deprecated, DeprecationWarning: v.DeprecationWarning,
			Schema:                   &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: props},
			Subresources:             &sub,
			AdditionalPrinterColumns: v.AdditionalPrinterColumns,
		})
		if v.Storage {
			out.Status.StoredVersions = []string{v.Name}
		}
	}
	names := s.Names
	if names.Singular == "" {
		names.Singular = strings.ToLower(s.Names.Kind)
	}
	if names.ListKind == "" {
		names.ListKind = s.Names.Kind + "List"
	}
	out.Status.AcceptedNames = names
	out.Status.Conditions = []apiextensionsv1.CustomResourceDefinitionCondition{
		{Type: apiextensionsv1.NamesAccepted, Status: apiextensionsv1.ConditionTrue, Reason: "NoConflicts"},
		{Type: apiextensionsv1.Established, Status: apiextensionsv1.ConditionTrue, Reason: "Bound"},
	}
	return out, nil
}
