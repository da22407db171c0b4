package schema

import (
	"encoding/json"
	"testing"
)

func TestSanitize(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"name", "name"},
		{"x-kubernetes-foo", "x_kubernetes_foo"},
		{"$ref", "_ref"},
		{"3d", "_3d"},
		{"__secret", "x__secret"},
		{"apis.kcp.io", "apis_kcp_io"},
		{"", "_"},
	} {
		if got := Sanitize(tc.in); got != tc.want {
			t.Errorf("Sanitize(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	for _, tc := range []struct{ in, want string }{
		{"example.com", "ExampleCom"},
		{"v1beta1", "V1beta1"},
		{"io.k8s.api.core.v1.ConfigMap", "IoK8sApiCoreV1ConfigMap"},
		{"1x", "X1x"},
	} {
		if got := Pascal(tc.in); got != tc.want {
			t.Errorf("Pascal(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func doc(t *testing.T, s string) *Document {
	t.Helper()
	d, err := ParseDocument([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

const metaDoc = `"io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta": {"type": "object", "properties": {"name": {"type": "string"}, "namespace": {"type": "string"}, "labels": {"type": "object", "additionalProperties": {"type": "string"}}}}`

func widgetDoc(group, version string) string {
	return `{"components": {"schemas": {` + metaDoc + `,
	"` + group + `.` + version + `.Widget": {"type": "object", "x-kubernetes-group-version-kind": [{"group": "` + group + `", "version": "` + version + `", "kind": "Widget"}],
	  "properties": {"apiVersion": {"type": "string"}, "kind": {"type": "string"},
	    "metadata": {"allOf": [{"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}]},
	    "spec": {"type": "object", "properties": {
	      "size": {"type": "string", "enum": ["Small", "Large"]},
	      "odd": {"type": "string", "enum": ["a-b", "c"]},
	      "port": {"x-kubernetes-int-or-string": true},
	      "memory": {"allOf": [{"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.api.resource.Quantity"}]},
	      "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
	      "x-weird": {"type": "integer"},
	      "x_weird": {"type": "boolean"},
	      "rules": {"type": "array", "items": {"type": "object", "properties": {"host": {"type": "string"}}}}
	    }}}}}}}`
}

func widgetResource(group, version string) *Resource {
	return &Resource{Group: group, Version: version, Resource: "widgets", Kind: "Widget", Namespaced: true,
		Verbs: []string{"get", "list", "watch", "create", "patch", "delete"}}
}

func TestBuildTypes(t *testing.T) {
	m, err := Build(&Input{
		Resources: []*Resource{widgetResource("example.dev", "v1")},
		Docs:      map[string]*Document{"example.dev/v1": doc(t, widgetDoc("example.dev", "v1"))},
	})
	if err != nil {
		t.Fatal(err)
	}
	spec := m.Schema.Types["WidgetSpec"]
	if spec == nil {
		t.Fatalf("no WidgetSpec type; types: %v", len(m.Schema.Types))
	}
	want := map[string]string{
		"size": "WidgetSpecSize", "odd": "String", "port": "IntOrString", "memory": "Quantity",
		"free": "JSON", "x_weird": "Int", "x_weird2": "Boolean", "rules": "[WidgetSpecRulesItem]",
	}
	for f, typ := range want {
		fd := spec.Fields.ForName(f)
		if fd == nil {
			t.Errorf("WidgetSpec has no field %s", f)
			continue
		}
		if got := fd.Type.String(); got != typ {
			t.Errorf("WidgetSpec.%s is %s, want %s", f, got, typ)
		}
	}
	if got := m.Schema.Types["ObjectMeta"].Fields.ForName("labels").Type.String(); got != "StringMap" {
		t.Errorf("ObjectMeta.labels is %s, want StringMap", got)
	}
	if m.Schema.Types["WidgetSpecSize"].Kind != "ENUM" {
		t.Errorf("WidgetSpecSize is not an enum")
	}
	q := m.Schema.Query.Fields.ForName("example_dev")
	if q == nil {
		t.Fatal("no Query.example_dev")
	}
	v1 := m.Schema.Types[q.Type.Name()].Fields.ForName("v1")
	for _, f := range []string{"Widgets", "Widget", "WidgetYaml"} {
		if m.Schema.Types[v1.Type.Name()].Fields.ForName(f) == nil {
			t.Errorf("no query field %s", f)
		}
	}
	if m.Schema.Subscription.Fields.ForName("example_dev_v1_widgets") == nil {
		t.Error("no subscription example_dev_v1_widgets")
	}
	if m.InputFields["WidgetSpecInput"]["x_weird2"] != "x_weird" || m.InputFields["WidgetSpecInput"]["x_weird"] != "x-weird" {
		t.Errorf("input field names do not map back to JSON: %v", m.InputFields["WidgetSpecInput"])
	}
}

// Two groups with a Widget: the names must not depend on map order, and
// the same input must always give the same schema.
func TestBuildCollisionsAreStable(t *testing.T) {
	in := func() *Input {
		return &Input{
			Resources: []*Resource{widgetResource("b.dev", "v1"), widgetResource("a.dev", "v1")},
			Docs: map[string]*Document{
				"a.dev/v1": doc(t, widgetDoc("a.dev", "v1")),
				"b.dev/v1": doc(t, widgetDoc("b.dev", "v1")),
			},
		}
	}
	var first string
	for i := 0; i < 5; i++ {
		m, err := Build(in())
		if err != nil {
			t.Fatal(err)
		}
		names := map[string]string{}
		for _, r := range m.Resources {
			names[r.Group] = r.TypeName
		}
		b, _ := json.Marshal(names)
		if first == "" {
			first = string(b)
		} else if string(b) != first {
			t.Fatalf("build %d named the widgets %s, the first build %s", i, b, first)
		}
	}
	if first != `{"a.dev":"Widget","b.dev":"V1Widget"}` {
		t.Errorf("widget type names: %s", first)
	}
}

// A resource whose schema has no properties is left out instead of
// breaking the schema.
func TestBuildSkipsSchemalessResources(t *testing.T) {
	d := doc(t, `{"components": {"schemas": {"x.dev.v1.Blob": {"type": "object", "x-kubernetes-preserve-unknown-fields": true,
		"x-kubernetes-group-version-kind": [{"group": "x.dev", "version": "v1", "kind": "Blob"}]}}}}`)
	m, err := Build(&Input{
		Resources: []*Resource{{Group: "x.dev", Version: "v1", Resource: "blobs", Kind: "Blob", Verbs: []string{"get", "list"}}},
		Docs:      map[string]*Document{"x.dev/v1": d},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Resources) != 0 {
		t.Errorf("resources: %v", m.Resources)
	}
}
