package apiexport

import (
	"testing"

	apisv1alpha1 "github.com/kcp-dev/sdk/apis/apis/v1alpha1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// TestSchemaToCRDSharesSchemas: the CRDs of two consumers of one schema
// share its decoded OpenAPI schema; a new resourceVersion is decoded anew.
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
	a, err := SchemaToCRD(schema, "id", "consumer-a")
	if err != nil {
		t.Fatal(err)
	}
	b, err := SchemaToCRD(schema, "id", "consumer-b")
	if err != nil {
		t.Fatal(err)
	}
	pa, pb := a.Spec.Versions[0].Schema.OpenAPIV3Schema, b.Spec.Versions[0].Schema.OpenAPIV3Schema
	if pa != pb {
		t.Error("two consumers of one schema decoded it twice")
	}
	if pa.Properties["spec"].Type != "string" {
		t.Errorf("decoded schema %+v", pa)
	}
	if a.Annotations["kcp.io/cluster"] == b.Annotations["kcp.io/cluster"] {
		t.Error("the consumers' CRDs must name their own clusters")
	}

	changed := schema.DeepCopy()
	changed.ResourceVersion = "6"
	changed.Spec.Versions[0].Schema.Raw = []byte(`{"type":"object","properties":{"spec":{"type":"integer"}}}`)
	c, err := SchemaToCRD(changed, "id", "consumer-c")
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Type; got != "integer" {
		t.Errorf("a new resourceVersion of the schema served the old one (spec is %q)", got)
	}
}
