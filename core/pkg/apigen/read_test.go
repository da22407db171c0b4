package apigen

import (
	"strings"
	"testing"
)

func TestReadCRDs(t *testing.T) {
	const crd = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: things.example.com
spec:
  group: example.com
  names: {kind: Thing, plural: things}
  scope: Cluster
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema: {type: object}
`
	tests := []struct {
		name      string
		input     string
		wantCRDs  int
		wantNotes int
		wantErr   string
	}{
		{name: "single", input: crd, wantCRDs: 1},
		{name: "multi-document with non-CRDs", input: "# header\n---\n" + crd + "---\napiVersion: v1\nkind: Namespace\nmetadata: {name: x}\n---\n---\n" + crd, wantCRDs: 2, wantNotes: 1},
		{name: "List", input: "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n- " + strings.ReplaceAll(strings.TrimSpace(crd), "\n", "\n  ") + "\n", wantCRDs: 1, wantNotes: 1},
		{name: "only comments", input: "# nothing here\n", wantCRDs: 0},
		{name: "invalid YAML", input: "apiVersion: [\n", wantErr: "f.yaml#1: invalid YAML"},
		{name: "duplicate key", input: "kind: a\nkind: b\n", wantErr: "invalid YAML"},
		{name: "invalid YAML in second document", input: crd + "---\nkind: : :\n", wantErr: "f.yaml#2: invalid YAML"},
		{name: "not a mapping", input: "- a\n- b\n", wantErr: "not a YAML mapping"},
		{name: "v1beta1 CRD", input: strings.Replace(crd, "apiextensions.k8s.io/v1", "apiextensions.k8s.io/v1beta1", 1), wantErr: "apiextensions.k8s.io/v1beta1 is not supported"},
		{name: "unknown field", input: strings.Replace(crd, "served:", "serve:", 1), wantErr: `unknown field "serve"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var notes []string
			crds, err := ReadCRDs("f.yaml", []byte(tt.input), func(f string, a ...any) { notes = append(notes, f) })
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(crds) != tt.wantCRDs || len(notes) != tt.wantNotes {
				t.Errorf("got %d CRDs and notes %q, want %d CRDs and %d notes", len(crds), notes, tt.wantCRDs, tt.wantNotes)
			}
			for _, c := range crds {
				if c.Name != "things.example.com" || len(c.Spec.Versions) != 1 {
					t.Errorf("bad CRD %+v", c)
				}
			}
		})
	}
}
