package apiexport

import (
	"testing"

	apisv1alpha1 "github.com/kcp-dev/sdk/apis/apis/v1alpha1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// TestSchemaToCRDSharesSchemas: two consumers of one schema and identity
// share one CRD (and its decoded OpenAPI schema); another identity gets its
// own; a new resourceVersion is built and decoded anew.
func TestSchemaToCRDSharesSchemas(t *testing.T) {
	schema := &apisv1alpha1.APIResourceSchema{
		ObjectMeta: metav1.ObjectMeta{Name: "v1.widgets.example.com", UID: "u1", ResourceVersion: "5"},
		Spec: apisv1alpha1.APIResourceSchemaSpec{
			Group: "example.com", Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Kind: "Widget"},
			Versions: []apisv1alpha1.APIResourceVersion{{Name: "v1", Served: true, Storage: true,
				Schema: runtime.RawExtension{Raw: []byte(`{"type":"object","properties":{"spec":{"type":"string"}}}`)}}},
		},
	}
	a, err := SchemaToCRD(schema, "id")
	if err != nil {
		t.Fatal(err)
	}
	b, err := SchemaToCRD(schema, "id")
	if err != nil {
		t.Fatal(err)
	}
	if a != b {
		t.Error("two consumers of one schema and identity built a CRD each")
	}
	pa := a.Spec.Versions[0].Schema.OpenAPIV3Schema
	if pa.Properties["spec"].Type != "string" {
		t.Errorf("decoded schema %+v", pa)
	}
	if got := a.Annotations[IdentityAnnotation]; got != "id" {
		t.Errorf("identity annotation %q, want id", got)
	}
	other, err := SchemaToCRD(schema, "other")
	if err != nil {
		t.Fatal(err)
	}
	if other == a || other.Annotations[IdentityAnnotation] != "other" || other.UID == a.UID {
		t.Errorf("another identity shares the CRD of the first (UID %s, %s)", other.UID, a.UID)
	}
	if other.Spec.Versions[0].Schema.OpenAPIV3Schema != pa {
		t.Error("another identity of one schema decoded it again")
	}

	changed := schema.DeepCopy()
	changed.ResourceVersion = "6"
	changed.Spec.Versions[0].Schema.Raw = []byte(`{"type":"object","properties":{"spec":{"type":"integer"}}}`)
	c, err := SchemaToCRD(changed, "id")
	if err != nil {
		t.Fatal(err)
	}
	if c == a || c.ResourceVersion != "6" {
		t.Error("a new resourceVersion of the schema got the old CRD")
	}
	if got := c.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Type; got != "integer" {
		t.Errorf("a new resourceVersion of the schema served the old one (spec is %q)", got)
	}
}
