package kcpbench

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestObjectsAreJSONSerializable(t *testing.T) {
	for _, u := range []*unstructured.Unstructured{
		Workspace("w", "universal"), Namespace("bench"), APIResourceSchema(), APIExport(),
		APIBinding("root:org:provider"), Widget("w-1", "bench", time.Unix(0, 5)),
	} {
		b, err := json.Marshal(u.Object)
		if err != nil {
			t.Fatalf("%s: %v", u.GetKind(), err)
		}
		if u.GetLabels()[createdByLabel] != createdByValue {
			t.Errorf("%s: missing created-by label", u.GetKind())
		}
		if !strings.Contains(string(b), `"apiVersion"`) {
			t.Errorf("%s: %s", u.GetKind(), b)
		}
	}
}

func TestObjectShapes(t *testing.T) {
	s := APIResourceSchema()
	if v, _, _ := unstructured.NestedString(s.Object, "spec", "names", "listKind"); v != "WidgetList" || s.GetName() != "v1.widgets.bench.meshplane.io" {
		t.Errorf("schema: %v", s.Object)
	}
	vs, _, _ := unstructured.NestedSlice(s.Object, "spec", "versions")
	if len(vs) != 1 || vs[0].(map[string]any)["schema"].(map[string]any)["x-kubernetes-preserve-unknown-fields"] != true {
		t.Errorf("schema versions: %v", vs)
	}
	e := APIExport()
	rs, _, _ := unstructured.NestedSlice(e.Object, "spec", "resources")
	if len(rs) != 1 || rs[0].(map[string]any)["schema"] != SchemaName || e.GetAPIVersion() != "apis.kcp.io/v1alpha2" {
		t.Errorf("export: %v", e.Object)
	}
	b := APIBinding("root:o:p")
	if p, _, _ := unstructured.NestedString(b.Object, "spec", "reference", "export", "path"); p != "root:o:p" {
		t.Errorf("binding: %v", b.Object)
	}
	if n, _, _ := unstructured.NestedString(b.Object, "spec", "reference", "export", "name"); n != "bench.meshplane.io" {
		t.Errorf("binding: %v", b.Object)
	}
	w := Workspace("x", "organization")
	if p, _, _ := unstructured.NestedString(w.Object, "spec", "type", "path"); p != "root" {
		t.Errorf("workspace: %v", w.Object)
	}
	wd := Widget("a", "ns", time.Date(2024, 1, 2, 3, 4, 5, 6, time.UTC))
	if wd.GetNamespace() != "ns" || wd.GetAnnotations()[CreatedAnnotation] != "2024-01-02T03:04:05.000000006Z" {
		t.Errorf("widget: %v", wd.Object)
	}
}

func TestStatusAccessors(t *testing.T) {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	if Phase(u) != "" || IdentityHash(u) != "" || EndpointURL(u) != "" {
		t.Fatal("empty object")
	}
	SetPhase(u, PhaseBound)
	u.Object["status"].(map[string]any)["identityHash"] = "abc"
	u.Object["status"].(map[string]any)["endpoints"] = []any{map[string]any{"url": "https://h/services/apiexport/x/y"}}
	if Phase(u) != "Bound" || IdentityHash(u) != "abc" || EndpointURL(u) != "https://h/services/apiexport/x/y" {
		t.Fatalf("%v", u.Object)
	}
	u.Object["status"].(map[string]any)["endpoints"] = []any{"bogus"}
	if EndpointURL(u) != "" {
		t.Fatal("malformed endpoints")
	}
}
