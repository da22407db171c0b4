package server

import (
	"errors"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	"k8s.io/apiserver/pkg/cel/openapi/resolver"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// TestCRDSchemas checks that a cluster's CRD kinds resolve to their
// schema with ObjectMeta filled in, that other kinds are not found (for
// the built-in resolver to answer), and that a policy's expressions on the
// kind are type-checked.
func TestCRDSchemas(t *testing.T) {
	names := apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Singular: "widget", Kind: "Widget", ListKind: "WidgetList"}
	crd := &apiextensionsv1.CustomResourceDefinition{
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{Group: "example.com", Scope: apiextensionsv1.NamespaceScoped, Names: names,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object",
					Properties: map[string]apiextensionsv1.JSONSchemaProps{"spec": {Type: "object",
						Properties: map[string]apiextensionsv1.JSONSchemaProps{"size": {Type: "integer"}}}}}}}}},
		Status: apiextensionsv1.CustomResourceDefinitionStatus{AcceptedNames: names,
			Conditions: []apiextensionsv1.CustomResourceDefinitionCondition{{Type: apiextensionsv1.Established, Status: apiextensionsv1.ConditionTrue}}},
	}
	crd.Name = "widgets.example.com"
	objectMeta := &spec.Schema{SchemaProps: spec.SchemaProps{Type: []string{"object"},
		Properties: map[string]spec.Schema{"name": {SchemaProps: spec.SchemaProps{Type: []string{"string"}}}}}}
	c := crdSchemas{crds: []*apiextensionsv1.CustomResourceDefinition{crd},
		static: map[string]*spec.Schema{"io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta": objectMeta}}

	s, err := c.ResolveSchema(schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"})
	if err != nil {
		t.Fatalf("resolving Widget: %v", err)
	}
	if _, ok := s.Properties["spec"].Properties["size"]; !ok {
		t.Errorf("Widget's schema has no spec.size: %v", s.Properties)
	}
	if _, ok := s.Properties["metadata"].Properties["name"]; !ok {
		t.Errorf("Widget's metadata is not ObjectMeta: %v", s.Properties["metadata"])
	}
	for _, gvk := range []schema.GroupVersionKind{{Group: "example.com", Version: "v2", Kind: "Widget"}, {Version: "v1", Kind: "ConfigMap"}} {
		if _, err := c.ResolveSchema(gvk); !errors.Is(err, resolver.ErrSchemaNotFound) {
			t.Errorf("resolving %v: %v, want ErrSchemaNotFound", gvk, err)
		}
	}

	checker := &validating.TypeChecker{SchemaResolver: c, RestMapper: c.restMapper()}
	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
		MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
			RuleWithOperations: admissionregistrationv1.RuleWithOperations{Operations: []admissionregistrationv1.OperationType{"CREATE"},
				Rule: admissionregistrationv1.Rule{APIGroups: []string{"example.com"}, APIVersions: []string{"v1"}, Resources: []string{"widgets"}}}}}},
		Validations: []admissionregistrationv1.Validation{{Expression: "object.spec.colour == 'red'"}, {Expression: "object.spec.size > 1 && object.metadata.name != ''"}},
	}}
	warnings := checker.Check(policy)
	if len(warnings) != 1 || warnings[0].FieldRef != "spec.validations[0].expression" {
		t.Errorf("warnings %+v, want one on spec.validations[0].expression", warnings)
	}
}
