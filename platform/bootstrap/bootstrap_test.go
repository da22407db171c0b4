package bootstrap

import "testing"

func TestContains(t *testing.T) {
	live := map[string]any{
		"spec": map[string]any{
			"type":    map[string]any{"name": "orgs", "path": "root"},
			"cluster": "abc",
			"claims":  []any{map[string]any{"resource": "namespaces", "verbs": []any{"*"}}},
		},
	}
	for _, tc := range []struct {
		name string
		want map[string]any
		ok   bool
	}{
		{"subset", map[string]any{"spec": map[string]any{"type": map[string]any{"name": "orgs"}}}, true},
		{"empty string matches absent", map[string]any{"spec": map[string]any{"claims": []any{map[string]any{"group": "", "resource": "namespaces", "verbs": []any{"*"}}}}}, true},
		{"different value", map[string]any{"spec": map[string]any{"type": map[string]any{"name": "org"}}}, false},
		{"missing field", map[string]any{"spec": map[string]any{"location": "x"}}, false},
		{"list longer", map[string]any{"spec": map[string]any{"claims": []any{map[string]any{"resource": "namespaces"}, map[string]any{"resource": "secrets"}}}}, false},
		{"list item differs", map[string]any{"spec": map[string]any{"claims": []any{map[string]any{"resource": "secrets"}}}}, false},
	} {
		if got := contains(live, tc.want); got != tc.ok {
			t.Errorf("%s: contains = %v, want %v", tc.name, got, tc.ok)
		}
	}
}

func TestManifestsParse(t *testing.T) {
	for _, s := range steps {
		objs, err := s.objects()
		if err != nil {
			t.Fatalf("%s: %v", s.path, err)
		}
		if len(objs) == 0 {
			t.Errorf("%s: no objects", s.path)
		}
		for _, o := range objs {
			if o.GetName() == "" || o.GetKind() == "" || o.GetAPIVersion() == "" {
				t.Errorf("%s: object without name, kind or apiVersion: %v", s.path, o.Object)
			}
		}
	}
}
