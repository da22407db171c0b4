package apigen

import (
	"encoding/json"
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	apisv1alpha1 "github.com/kcp-dev/sdk/apis/apis/v1alpha1"
)

var testNow = time.Date(2024, 3, 15, 23, 30, 0, 0, time.FixedZone("x", -5*3600)) // 2024-03-16 UTC

func readTestCRDs(t *testing.T, file string) map[string]*apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	data, err := os.ReadFile("testdata/" + file)
	if err != nil {
		t.Fatal(err)
	}
	crds, err := ReadCRDs(file, data, nil)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*apiextensionsv1.CustomResourceDefinition{}
	for _, c := range crds {
		out[c.Name] = c
	}
	return out
}

func schemaMap(t *testing.T, v apisv1alpha1.APIResourceVersion) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(v.Schema.Raw, &m); err != nil {
		t.Fatalf("version %s: schema is not a JSON object: %v", v.Name, err)
	}
	return m
}

func TestConvertCRD(t *testing.T) {
	crds := readTestCRDs(t, "widgets.yaml")
	for k, v := range readTestCRDs(t, "gizmos.yaml") {
		crds[k] = v
	}

	tests := []struct {
		crd      string
		wantName string // regexp
		check    func(t *testing.T, s *apisv1alpha1.APIResourceSchema)
	}{
		{
			crd:      "widgets.example.com",
			wantName: `^v240316-[0-9a-f]{8}\.widgets\.example\.com$`,
			check: func(t *testing.T, s *apisv1alpha1.APIResourceSchema) {
				sp := s.Spec
				if sp.Group != "example.com" || sp.Scope != apiextensionsv1.NamespaceScoped {
					t.Errorf("group/scope = %q/%q", sp.Group, sp.Scope)
				}
				wantNames := apiextensionsv1.CustomResourceDefinitionNames{
					Kind: "Widget", ListKind: "WidgetList", Plural: "widgets", Singular: "widget",
					ShortNames: []string{"wd"}, Categories: []string{"all"},
				}
				if !reflect.DeepEqual(sp.Names, wantNames) {
					t.Errorf("names = %+v, want %+v", sp.Names, wantNames)
				}
				if len(sp.Versions) != 2 {
					t.Fatalf("got %d versions, want 2", len(sp.Versions))
				}
				v0, v1 := sp.Versions[0], sp.Versions[1]
				if v0.Name != "v1alpha1" || !v0.Served || v0.Storage || !v0.Deprecated {
					t.Errorf("v1alpha1 = %+v", v0)
				}
				if v0.DeprecationWarning == nil || !strings.Contains(*v0.DeprecationWarning, "use v1") {
					t.Errorf("v1alpha1 deprecationWarning = %v", v0.DeprecationWarning)
				}
				if v0.Subresources.Status != nil || len(v0.AdditionalPrinterColumns) != 0 {
					t.Errorf("v1alpha1 has unexpected subresources/columns: %+v", v0)
				}
				if v1.Name != "v1" || !v1.Served || !v1.Storage || v1.Deprecated || v1.DeprecationWarning != nil {
					t.Errorf("v1 = %+v", v1)
				}
				if v1.Subresources.Status == nil || v1.Subresources.Scale != nil {
					t.Errorf("v1 subresources = %+v, want status only", v1.Subresources)
				}
				wantCols := []apiextensionsv1.CustomResourceColumnDefinition{
					{Name: "Size", Type: "integer", JSONPath: ".spec.size"},
					{Name: "Ready", Type: "string", JSONPath: `.status.conditions[?(@.type=="Ready")].status`, Priority: 1},
				}
				if !reflect.DeepEqual(v1.AdditionalPrinterColumns, wantCols) {
					t.Errorf("v1 printer columns = %+v", v1.AdditionalPrinterColumns)
				}
				m := schemaMap(t, v1)
				size := m["properties"].(map[string]any)["spec"].(map[string]any)["properties"].(map[string]any)["size"].(map[string]any)
				if size["type"] != "integer" || size["default"] != 3.0 || size["minimum"] != 1.0 {
					t.Errorf("v1 schema spec.size = %v", size)
				}
				status := m["properties"].(map[string]any)["status"].(map[string]any)
				if status["x-kubernetes-preserve-unknown-fields"] != true {
					t.Errorf("v1 schema status = %v", status)
				}
				got, err := v1.GetSchema()
				if err != nil || !reflect.DeepEqual(got, crds["widgets.example.com"].Spec.Versions[1].Schema.OpenAPIV3Schema) {
					t.Errorf("v1 schema does not round-trip to the CRD schema (err %v)", err)
				}
				if sp.Conversion == nil || sp.Conversion.Strategy != "None" || sp.Conversion.Webhook != nil {
					t.Errorf("conversion = %+v, want None", sp.Conversion)
				}
			},
		},
		{
			crd:      "gizmos.example.com",
			wantName: `^v240316-[0-9a-f]{8}\.gizmos\.example\.com$`,
			check: func(t *testing.T, s *apisv1alpha1.APIResourceSchema) {
				if s.Spec.Scope != apiextensionsv1.ClusterScoped {
					t.Errorf("scope = %q", s.Spec.Scope)
				}
				want := &apisv1alpha1.CustomResourceConversion{
					Strategy: "Webhook",
					Webhook: &apisv1alpha1.WebhookConversion{
						ConversionReviewVersions: []string{"v1"},
						ClientConfig: &apisv1alpha1.WebhookClientConfig{
							URL:      "https://convert.example.com/gizmos",
							CABundle: []byte("foo"),
						},
					},
				}
				if !reflect.DeepEqual(s.Spec.Conversion, want) {
					t.Errorf("conversion = %+v, want %+v", s.Spec.Conversion, want)
				}
			},
		},
		{
			crd:      "sprockets.other.example.org",
			wantName: `^v240316-[0-9a-f]{8}\.sprockets\.other\.example\.org$`,
			check: func(t *testing.T, s *apisv1alpha1.APIResourceSchema) {
				if len(s.Spec.Versions) != 1 || s.Spec.Versions[0].Name != "v1beta1" {
					t.Errorf("versions = %+v", s.Spec.Versions)
				}
				if s.Spec.Conversion == nil || s.Spec.Conversion.Strategy != "None" {
					t.Errorf("conversion = %+v, want None", s.Spec.Conversion)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.crd, func(t *testing.T) {
			crd := crds[tt.crd]
			if crd == nil {
				t.Fatalf("CRD %s not in testdata", tt.crd)
			}
			schemas, err := Generate([]*apiextensionsv1.CustomResourceDefinition{crd}, testNow, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			s := schemas[0]
			if s.APIVersion != "apis.kcp.io/v1alpha1" || s.Kind != "APIResourceSchema" {
				t.Errorf("type = %s %s", s.APIVersion, s.Kind)
			}
			if !regexp.MustCompile(tt.wantName).MatchString(s.Name) {
				t.Errorf("name %q does not match %s", s.Name, tt.wantName)
			}
			hash, err := SpecHash(&s.Spec)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(s.Name, "v240316-"+hash[:8]+".") {
				t.Errorf("name %q does not use the spec hash %s", s.Name, hash[:8])
			}
			tt.check(t, s)

			// The YAML rendering has no status and reads back to the same spec.
			out, err := MarshalSchema(s)
			if err != nil {
				t.Fatal(err)
			}
			var generic map[string]any
			if err := yaml.Unmarshal(out, &generic); err != nil {
				t.Fatal(err)
			}
			if _, ok := generic["status"]; ok {
				t.Errorf("output has a status:\n%s", out)
			}
			if md := generic["metadata"].(map[string]any); len(md) != 1 {
				t.Errorf("metadata = %v, want only the name", md)
			}
			var back apisv1alpha1.APIResourceSchema
			if err := yaml.UnmarshalStrict(out, &back); err != nil {
				t.Fatal(err)
			}
			hash2, err := SpecHash(&back.Spec)
			if err != nil {
				t.Fatal(err)
			}
			if hash2 != hash {
				t.Errorf("spec hash changed across a YAML round trip: %s -> %s\n%s", hash, hash2, out)
			}
		})
	}
}

func TestSpecHashIgnoresKeyOrder(t *testing.T) {
	a := &apisv1alpha1.APIResourceSchemaSpec{Group: "g", Versions: []apisv1alpha1.APIResourceVersion{{Name: "v1"}}}
	b := a.DeepCopy()
	a.Versions[0].Schema.Raw = []byte(`{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"integer"}}}`)
	b.Versions[0].Schema.Raw = []byte(`{ "properties": {"b": {"type":"integer"}, "a": {"type":"string"}}, "type": "object" }`)
	ha, err := SpecHash(a)
	if err != nil {
		t.Fatal(err)
	}
	hb, err := SpecHash(b)
	if err != nil {
		t.Fatal(err)
	}
	if ha != hb {
		t.Errorf("hashes differ: %s %s", ha, hb)
	}
	b.Versions[0].Schema.Raw = []byte(`{"type":"object"}`)
	if hc, _ := SpecHash(b); hc == ha {
		t.Errorf("different specs have the same hash")
	}
}

func TestConvertCRDErrors(t *testing.T) {
	base := func() *apiextensionsv1.CustomResourceDefinition {
		return readTestCRDs(t, "widgets.yaml")["widgets.example.com"].DeepCopy()
	}
	str := func(s string) *string { return &s }
	tests := []struct {
		name    string
		mutate  func(c *apiextensionsv1.CustomResourceDefinition)
		wantErr string
	}{
		{"no versions", func(c *apiextensionsv1.CustomResourceDefinition) { c.Spec.Versions = nil }, "spec.versions is empty"},
		{"no group", func(c *apiextensionsv1.CustomResourceDefinition) { c.Spec.Group = "" }, "spec.group is empty"},
		{"no plural", func(c *apiextensionsv1.CustomResourceDefinition) { c.Spec.Names.Plural = "" }, "spec.names.plural is empty"},
		{"no kind", func(c *apiextensionsv1.CustomResourceDefinition) { c.Spec.Names.Kind = "" }, "spec.names.kind is empty"},
		{"bad scope", func(c *apiextensionsv1.CustomResourceDefinition) { c.Spec.Scope = "Global" }, "spec.scope must be"},
		{"no storage version", func(c *apiextensionsv1.CustomResourceDefinition) { c.Spec.Versions[1].Storage = false }, "exactly one version must have storage: true, found 0"},
		{"two storage versions", func(c *apiextensionsv1.CustomResourceDefinition) { c.Spec.Versions[0].Storage = true }, "found 2"},
		{"no schema", func(c *apiextensionsv1.CustomResourceDefinition) { c.Spec.Versions[0].Schema = nil }, "has no schema.openAPIV3Schema"},
		{"bad version name", func(c *apiextensionsv1.CustomResourceDefinition) { c.Spec.Versions[0].Name = "latest" }, `"latest" is not a valid APIResourceSchema version`},
		{"duplicate version", func(c *apiextensionsv1.CustomResourceDefinition) { c.Spec.Versions[0].Name = "v1" }, `"v1" is duplicated`},
		{"webhook without config", func(c *apiextensionsv1.CustomResourceDefinition) {
			c.Spec.Conversion = &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.WebhookConverter}
		}, "webhook is missing"},
		{"webhook service", func(c *apiextensionsv1.CustomResourceDefinition) {
			c.Spec.Conversion = &apiextensionsv1.CustomResourceConversion{
				Strategy: apiextensionsv1.WebhookConverter,
				Webhook: &apiextensionsv1.WebhookConversion{ClientConfig: &apiextensionsv1.WebhookClientConfig{
					Service: &apiextensionsv1.ServiceReference{Namespace: "ns", Name: "svc", Path: str("/convert")},
				}},
			}
		}, "clientConfig.service is not supported"},
		{"unknown strategy", func(c *apiextensionsv1.CustomResourceDefinition) {
			c.Spec.Conversion = &apiextensionsv1.CustomResourceConversion{Strategy: "Magic"}
		}, `strategy "Magic" is not supported`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := base()
			tt.mutate(c)
			_, err := Generate([]*apiextensionsv1.CustomResourceDefinition{c}, testNow, nil, nil)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error = %v, want it to contain %q", err, tt.wantErr)
			}
			if !strings.Contains(err.Error(), "widgets.example.com") {
				t.Errorf("error %q does not name the CRD", err)
			}
		})
	}

	t.Run("duplicate resource", func(t *testing.T) {
		c := base()
		_, err := Generate([]*apiextensionsv1.CustomResourceDefinition{c, c.DeepCopy()}, testNow, nil, nil)
		if err == nil || !strings.Contains(err.Error(), "defined more than once") {
			t.Fatalf("error = %v", err)
		}
	})
}

func TestSelectableFieldsWarning(t *testing.T) {
	c := readTestCRDs(t, "widgets.yaml")["widgets.example.com"]
	c.Spec.Versions[1].SelectableFields = []apiextensionsv1.SelectableField{{JSONPath: ".spec.size"}}
	var notes []string
	if _, err := ConvertCRD(c, func(f string, a ...any) { notes = append(notes, f) }); err != nil {
		t.Fatal(err)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "selectableFields") {
		t.Errorf("notes = %q", notes)
	}
}
