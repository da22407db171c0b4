package server

import (
	"fmt"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/controller/openapi/builder"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/cel/openapi/resolver"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/meshplane/meshplane/core/internal/crd"
)

// crdSchemas resolves the OpenAPI schemas of the kinds one cluster's CRDs
// and bound resources serve, for the type checker of its policies (kube's
// reads them from its own OpenAPI v3).
type crdSchemas struct {
	crds []*apiextensionsv1.CustomResourceDefinition
	// static are the built-in definitions the CRD schemas refer to
	// (ObjectMeta), by OpenAPI v3 component name.
	static map[string]*spec.Schema
}

const componentsPrefix = "#/components/schemas/"

// ResolveSchema implements resolver.SchemaResolver.
func (c crdSchemas) ResolveSchema(gvk schema.GroupVersionKind) (*spec.Schema, error) {
	def := c.serving(gvk)
	if def == nil {
		return nil, fmt.Errorf("cannot resolve %v: %w", gvk, resolver.ErrSchemaNotFound)
	}
	doc, err := builder.BuildOpenAPIV3(def, gvk.Version, builder.Options{})
	if err != nil {
		return nil, err
	}
	root := ""
	for name, s := range doc.Components.Schemas {
		if kindOf(s) == gvk {
			root = name
		}
	}
	if root == "" {
		return nil, fmt.Errorf("cannot resolve %v in the schema of %s: %w", gvk, def.Name, resolver.ErrSchemaNotFound)
	}
	return resolver.PopulateRefs(func(ref string) (*spec.Schema, bool) {
		name := strings.TrimPrefix(ref, componentsPrefix)
		if s, ok := doc.Components.Schemas[name]; ok {
			return s, true
		}
		s, ok := c.static[name]
		return s, ok
	}, root)
}

// serving returns the established CRD serving gvk.
func (c crdSchemas) serving(gvk schema.GroupVersionKind) *apiextensionsv1.CustomResourceDefinition {
	for _, def := range c.crds {
		if def.Spec.Group != gvk.Group || def.Status.AcceptedNames.Kind != gvk.Kind || !crd.Established(def) {
			continue
		}
		for _, v := range def.Spec.Versions {
			if v.Name == gvk.Version && v.Served {
				return def
			}
		}
	}
	return nil
}

// kindOf reads the kind a component schema is of
// (x-kubernetes-group-version-kind).
func kindOf(s *spec.Schema) schema.GroupVersionKind {
	list, _ := s.Extensions["x-kubernetes-group-version-kind"].([]any)
	for _, item := range list {
		if m, ok := item.(map[string]any); ok {
			g, _ := m["group"].(string)
			v, _ := m["version"].(string)
			k, _ := m["kind"].(string)
			return schema.GroupVersionKind{Group: g, Version: v, Kind: k}
		}
	}
	return schema.GroupVersionKind{}
}

// restMapper maps the CRDs' resources to their kinds.
func (c crdSchemas) restMapper() meta.RESTMapper {
	m := meta.NewDefaultRESTMapper(nil)
	for _, def := range c.crds {
		if !crd.Established(def) {
			continue
		}
		names := def.Status.AcceptedNames
		scope := meta.RESTScopeRoot
		if def.Spec.Scope == apiextensionsv1.NamespaceScoped {
			scope = meta.RESTScopeNamespace
		}
		for _, v := range def.Spec.Versions {
			if !v.Served {
				continue
			}
			gv := schema.GroupVersion{Group: def.Spec.Group, Version: v.Name}
			m.AddSpecific(gv.WithKind(names.Kind), gv.WithResource(names.Plural), gv.WithResource(names.Singular), scope)
		}
	}
	return m
}
