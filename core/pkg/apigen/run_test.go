package apigen

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	apisv1alpha1 "github.com/kcp-dev/sdk/apis/apis/v1alpha1"
	apisv1alpha2 "github.com/kcp-dev/sdk/apis/apis/v1alpha2"
)

// inputDir copies the testdata CRDs into a fresh directory.
func inputDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range []string{"widgets.yaml", "gizmos.yaml"} {
		data, err := os.ReadFile(filepath.Join("testdata", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Ignored: not a YAML file.
	if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte("# not yaml: ["), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func run(t *testing.T, o Options) (stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	o.Stdout, o.Stderr = &out, &errOut
	if o.Now == nil {
		o.Now = func() time.Time { return testNow }
	}
	if err := Run(o); err != nil {
		t.Fatalf("Run: %v\nstderr:\n%s", err, errOut.String())
	}
	return out.String(), errOut.String()
}

func readDir(t *testing.T, dir string) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		files[e.Name()] = string(data)
	}
	return files
}

func readSchema(t *testing.T, path string) *apisv1alpha1.APIResourceSchema {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := &apisv1alpha1.APIResourceSchema{}
	if err := yaml.UnmarshalStrict(data, s); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return s
}

func readExport(t *testing.T, path string) *apisv1alpha2.APIExport {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	e := &apisv1alpha2.APIExport{}
	if err := yaml.UnmarshalStrict(data, e); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return e
}

func crdResource(name, group, schema string) apisv1alpha2.ResourceSchema {
	return apisv1alpha2.ResourceSchema{
		Name: name, Group: group, Schema: schema,
		Storage: apisv1alpha2.ResourceSchemaStorage{CRD: &apisv1alpha2.ResourceSchemaStorageCRD{}},
	}
}

func TestRunOutputDir(t *testing.T) {
	in, out := inputDir(t), filepath.Join(t.TempDir(), "out")
	_, stderr := run(t, Options{InputDir: in, OutputDir: out})
	if !strings.Contains(stderr, `widgets.yaml#1: skipping non-CRD document (apiVersion "v1", kind "ConfigMap")`) {
		t.Errorf("stderr does not note the skipped ConfigMap:\n%s", stderr)
	}

	files := readDir(t, out)
	var names []string
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	want := []string{
		"apiexport-example.com.yaml",
		"apiexport-other.example.org.yaml",
		"apiresourceschema-gizmos.example.com.yaml",
		"apiresourceschema-sprockets.other.example.org.yaml",
		"apiresourceschema-widgets.example.com.yaml",
	}
	if !reflect.DeepEqual(names, want) {
		t.Fatalf("files = %q, want %q", names, want)
	}

	widgets := readSchema(t, filepath.Join(out, "apiresourceschema-widgets.example.com.yaml"))
	gizmos := readSchema(t, filepath.Join(out, "apiresourceschema-gizmos.example.com.yaml"))
	sprockets := readSchema(t, filepath.Join(out, "apiresourceschema-sprockets.other.example.org.yaml"))
	for _, s := range []*apisv1alpha1.APIResourceSchema{widgets, gizmos, sprockets} {
		hash, err := SpecHash(&s.Spec)
		if err != nil {
			t.Fatal(err)
		}
		if wantName := "v240316-" + hash[:8] + "." + s.Spec.Names.Plural + "." + s.Spec.Group; s.Name != wantName {
			t.Errorf("schema name %q, want %q", s.Name, wantName)
		}
	}

	export := readExport(t, filepath.Join(out, "apiexport-example.com.yaml"))
	if export.APIVersion != "apis.kcp.io/v1alpha2" || export.Kind != "APIExport" || export.Name != "example.com" {
		t.Errorf("export header = %s %s %s", export.APIVersion, export.Kind, export.Name)
	}
	wantRes := []apisv1alpha2.ResourceSchema{
		crdResource("gizmos", "example.com", gizmos.Name),
		crdResource("widgets", "example.com", widgets.Name),
	}
	if !reflect.DeepEqual(export.Spec.Resources, wantRes) {
		t.Errorf("resources = %+v, want %+v", export.Spec.Resources, wantRes)
	}
	if strings.Contains(files["apiexport-example.com.yaml"], "status") {
		t.Errorf("export has a status:\n%s", files["apiexport-example.com.yaml"])
	}
	other := readExport(t, filepath.Join(out, "apiexport-other.example.org.yaml"))
	if want := []apisv1alpha2.ResourceSchema{crdResource("sprockets", "other.example.org", sprockets.Name)}; !reflect.DeepEqual(other.Spec.Resources, want) {
		t.Errorf("other resources = %+v, want %+v", other.Spec.Resources, want)
	}
}

func TestRunRerunIsStable(t *testing.T) {
	in, out := inputDir(t), t.TempDir()
	run(t, Options{InputDir: in, OutputDir: out})
	first := readDir(t, out)

	// A later day: unchanged specs keep their names, files are untouched.
	later := func() time.Time { return testNow.Add(72 * time.Hour) }
	_, stderr := run(t, Options{InputDir: in, OutputDir: out, Now: later})
	if second := readDir(t, out); !reflect.DeepEqual(first, second) {
		t.Errorf("rerun changed the output")
	}
	if strings.Contains(stderr, "wrote") {
		t.Errorf("rerun wrote files:\n%s", stderr)
	}

	// Positional files give the same result as --input-dir.
	run(t, Options{Files: []string{filepath.Join(in, "gizmos.yaml"), filepath.Join(in, "widgets.yaml")}, OutputDir: out, Now: later})
	if third := readDir(t, out); !reflect.DeepEqual(first, third) {
		t.Errorf("rerun with file arguments changed the output")
	}

	// Changing a CRD renames only its schema and updates the export.
	oldWidgets := readSchema(t, filepath.Join(out, "apiresourceschema-widgets.example.com.yaml")).Name
	oldGizmos := readSchema(t, filepath.Join(out, "apiresourceschema-gizmos.example.com.yaml")).Name
	path := filepath.Join(in, "widgets.yaml")
	data, _ := os.ReadFile(path)
	data = bytes.Replace(data, []byte("minimum: 1"), []byte("minimum: 2"), 1)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	run(t, Options{InputDir: in, OutputDir: out, Now: later})
	newWidgets := readSchema(t, filepath.Join(out, "apiresourceschema-widgets.example.com.yaml")).Name
	if newWidgets == oldWidgets || !strings.HasPrefix(newWidgets, "v240319-") {
		t.Errorf("changed schema name %q (was %q), want a new v240319- name", newWidgets, oldWidgets)
	}
	if got := readSchema(t, filepath.Join(out, "apiresourceschema-gizmos.example.com.yaml")).Name; got != oldGizmos {
		t.Errorf("unchanged schema renamed %q -> %q", oldGizmos, got)
	}
	export := readExport(t, filepath.Join(out, "apiexport-example.com.yaml"))
	want := []apisv1alpha2.ResourceSchema{crdResource("gizmos", "example.com", oldGizmos), crdResource("widgets", "example.com", newWidgets)}
	if !reflect.DeepEqual(export.Spec.Resources, want) {
		t.Errorf("resources = %+v, want %+v", export.Spec.Resources, want)
	}
}

func TestRunReusesNameFromAnyFile(t *testing.T) {
	in, out := inputDir(t), t.TempDir()
	run(t, Options{InputDir: in, OutputDir: out})
	// The schema was moved into another (multi-document) file.
	name := readSchema(t, filepath.Join(out, "apiresourceschema-widgets.example.com.yaml")).Name
	data, _ := os.ReadFile(filepath.Join(out, "apiresourceschema-widgets.example.com.yaml"))
	if err := os.WriteFile(filepath.Join(out, "all.yml"), append([]byte("kind: Something\n---\n"), data...), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(out, "apiresourceschema-widgets.example.com.yaml")); err != nil {
		t.Fatal(err)
	}
	run(t, Options{InputDir: in, OutputDir: out, Now: func() time.Time { return testNow.AddDate(1, 0, 0) }})
	if got := readSchema(t, filepath.Join(out, "apiresourceschema-widgets.example.com.yaml")).Name; got != name {
		t.Errorf("name = %q, want reused %q", got, name)
	}
}

const existingExport = `# Maintained by hand except for spec.resources.
apiVersion: apis.kcp.io/v1alpha2
kind: APIExport
metadata:
  name: example.com
  annotations:
    owner: team-a
spec:
  # Generated by apigen.
  resources:
  - name: oldthings
    group: example.com
    schema: v230101-deadbeef.oldthings.example.com
    storage:
      crd: {}
  - name: widgets
    group: example.com
    schema: v230101-deadbeef.widgets.example.com
    storage:
      crd: {}
  - name: virtuals
    group: example.com
    schema: v230101-deadbeef.virtuals.example.com
    storage:
      virtual:
        reference:
          apiGroup: example.com
          kind: Provider
          name: p
        identityHash: abc
  permissionClaims:
  - group: ""
    resource: secrets # to read credentials
    verbs: ["get", "list", "watch"]
  - resource: configmaps
    verbs: ["*"]
    identityHash: xyz
  maximalPermissionPolicy:
    local: {}
`

func TestRunUpdatesExistingExport(t *testing.T) {
	in, out := inputDir(t), t.TempDir()
	path := filepath.Join(out, "apiexport-example.com.yaml")
	if err := os.WriteFile(path, []byte(existingExport), 0o644); err != nil {
		t.Fatal(err)
	}
	var before apisv1alpha2.APIExport
	if err := yaml.UnmarshalStrict([]byte(existingExport), &before); err != nil {
		t.Fatal(err)
	}

	_, stderr := run(t, Options{InputDir: in, OutputDir: out})
	if !strings.Contains(stderr, "removing resource oldthings.example.com") {
		t.Errorf("stderr does not mention the dropped resource:\n%s", stderr)
	}
	after := readExport(t, path)
	if !reflect.DeepEqual(after.Spec.PermissionClaims, before.Spec.PermissionClaims) {
		t.Errorf("permissionClaims changed:\n got %+v\nwant %+v", after.Spec.PermissionClaims, before.Spec.PermissionClaims)
	}
	if !reflect.DeepEqual(after.Spec.MaximalPermissionPolicy, before.Spec.MaximalPermissionPolicy) {
		t.Errorf("maximalPermissionPolicy changed: %+v", after.Spec.MaximalPermissionPolicy)
	}
	if !reflect.DeepEqual(after.ObjectMeta, before.ObjectMeta) {
		t.Errorf("metadata changed: %+v", after.ObjectMeta)
	}
	widgets := readSchema(t, filepath.Join(out, "apiresourceschema-widgets.example.com.yaml")).Name
	gizmos := readSchema(t, filepath.Join(out, "apiresourceschema-gizmos.example.com.yaml")).Name
	want := []apisv1alpha2.ResourceSchema{
		crdResource("gizmos", "example.com", gizmos),
		crdResource("widgets", "example.com", widgets),
		before.Spec.Resources[2], // not CRD-backed: kept
	}
	if !reflect.DeepEqual(after.Spec.Resources, want) {
		t.Errorf("resources:\n got %+v\nwant %+v", after.Spec.Resources, want)
	}
	data, _ := os.ReadFile(path)
	for _, c := range []string{"# Maintained by hand", "# Generated by apigen.", "# to read credentials"} {
		if !bytes.Contains(data, []byte(c)) {
			t.Errorf("comment %q lost:\n%s", c, data)
		}
	}

	// Updating again is a no-op.
	run(t, Options{InputDir: in, OutputDir: out})
	if again, _ := os.ReadFile(path); !bytes.Equal(again, data) {
		t.Errorf("second update changed the file:\n%s\n---\n%s", data, again)
	}
}

func TestUpdateAPIExport(t *testing.T) {
	res := []apisv1alpha2.ResourceSchema{crdResource("widgets", "example.com", "v1.widgets.example.com")}
	tests := []struct {
		name    string
		in      string
		wantErr string
	}{
		{name: "no spec", in: "apiVersion: apis.kcp.io/v1alpha2\nkind: APIExport\nmetadata: {name: example.com}\n"},
		{name: "null spec", in: "apiVersion: apis.kcp.io/v1alpha2\nkind: APIExport\nmetadata: {name: example.com}\nspec:\n"},
		{name: "flow spec", in: "apiVersion: apis.kcp.io/v1alpha2\nkind: APIExport\nmetadata: {name: example.com}\nspec: {permissionClaims: [{resource: secrets, verbs: [get]}]}\n"},
		{name: "empty resources", in: "apiVersion: apis.kcp.io/v1alpha2\nkind: APIExport\nmetadata: {name: example.com}\nspec:\n  resources: []\n"},
		{name: "other documents kept", in: "apiVersion: v1\nkind: Namespace\nmetadata: {name: x}\n---\napiVersion: apis.kcp.io/v1alpha2\nkind: APIExport\nmetadata: {name: example.com}\n"},
		{name: "invalid YAML", in: "spec: [\n", wantErr: "invalid YAML"},
		{name: "no APIExport", in: "apiVersion: v1\nkind: ConfigMap\n", wantErr: "no APIExport document"},
		{name: "v1alpha1", in: "apiVersion: apis.kcp.io/v1alpha1\nkind: APIExport\nspec:\n  latestResourceSchemas: []\n", wantErr: `apiVersion "apis.kcp.io/v1alpha1", only apis.kcp.io/v1alpha2 is supported`},
		{name: "resources not a list", in: "apiVersion: apis.kcp.io/v1alpha2\nkind: APIExport\nspec:\n  resources: foo\n", wantErr: "spec.resources is not a list"},
		{name: "spec not a mapping", in: "apiVersion: apis.kcp.io/v1alpha2\nkind: APIExport\nspec: [1]\n", wantErr: "spec is not a mapping"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, _, err := UpdateAPIExport([]byte(tt.in), res)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			docs, err := SplitDocuments("out", out)
			if err != nil {
				t.Fatal(err)
			}
			last := docs[len(docs)-1]
			var e apisv1alpha2.APIExport
			if err := yaml.UnmarshalStrict(last.JSON, &e); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			if !reflect.DeepEqual(e.Spec.Resources, res) {
				t.Errorf("resources = %+v\n%s", e.Spec.Resources, out)
			}
			if strings.Contains(tt.in, "Namespace") && (len(docs) != 2 || docs[0].Kind != "Namespace") {
				t.Errorf("other document lost:\n%s", out)
			}
			if strings.Contains(tt.in, "permissionClaims") && len(e.Spec.PermissionClaims) != 1 {
				t.Errorf("permissionClaims lost:\n%s", out)
			}
		})
	}
}

func TestRunStdout(t *testing.T) {
	in := inputDir(t)
	for _, outDir := range []string{"", "-"} {
		stdout, _ := run(t, Options{InputDir: in, OutputDir: outDir})
		docs, err := SplitDocuments("stdout", []byte(stdout))
		if err != nil {
			t.Fatal(err)
		}
		var kinds []string
		for _, d := range docs {
			kinds = append(kinds, d.Kind)
		}
		want := []string{"APIResourceSchema", "APIResourceSchema", "APIResourceSchema", "APIExport", "APIExport"}
		if !reflect.DeepEqual(kinds, want) {
			t.Errorf("output dir %q: kinds = %q, want %q", outDir, kinds, want)
		}
	}
	// Standard input as a file argument.
	data, _ := os.ReadFile(filepath.Join("testdata", "gizmos.yaml"))
	stdout, _ := run(t, Options{Files: []string{"-"}, Stdin: bytes.NewReader(data)})
	if !strings.Contains(stdout, "name: v240316-") || !strings.Contains(stdout, "kind: APIExport") {
		t.Errorf("stdout:\n%s", stdout)
	}
}

func TestRunErrors(t *testing.T) {
	write := func(t *testing.T, dir, name, content string) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	noVersions := "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: things.example.com}\nspec:\n  group: example.com\n  names: {kind: Thing, plural: things}\n  scope: Cluster\n"
	tests := []struct {
		name    string
		setup   func(t *testing.T, in, out string) Options
		wantErr string
	}{
		{"no input", func(t *testing.T, in, out string) Options { return Options{OutputDir: out} }, "no input"},
		{"input dir and files", func(t *testing.T, in, out string) Options {
			return Options{InputDir: in, Files: []string{"x.yaml"}}
		}, "not both"},
		{"missing input dir", func(t *testing.T, in, out string) Options {
			return Options{InputDir: filepath.Join(in, "nope")}
		}, "reading input directory"},
		{"empty input dir", func(t *testing.T, in, out string) Options { return Options{InputDir: in} }, "contains no *.yaml or *.yml files"},
		{"missing file", func(t *testing.T, in, out string) Options {
			return Options{Files: []string{filepath.Join(in, "nope.yaml")}}
		}, "no such file"},
		{"no CRDs", func(t *testing.T, in, out string) Options {
			write(t, in, "cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
			return Options{InputDir: in, OutputDir: out}
		}, "no CustomResourceDefinitions found"},
		{"invalid YAML", func(t *testing.T, in, out string) Options {
			write(t, in, "bad.yml", "apiVersion: v1\nkind: [\n")
			return Options{InputDir: in, OutputDir: out}
		}, "bad.yml#1: invalid YAML"},
		{"CRD without versions", func(t *testing.T, in, out string) Options {
			return Options{Files: []string{write(t, in, "crd.yaml", noVersions)}, OutputDir: out}
		}, "CustomResourceDefinition things.example.com: spec.versions is empty"},
		{"bad existing APIExport", func(t *testing.T, in, out string) Options {
			write(t, out, "apiexport-example.com.yaml", "apiVersion: apis.kcp.io/v1alpha1\nkind: APIExport\n")
			data, _ := os.ReadFile(filepath.Join("testdata", "gizmos.yaml"))
			return Options{Files: []string{write(t, in, "crd.yaml", string(data))}, OutputDir: out}
		}, "apiexport-example.com.yaml: APIExport has apiVersion"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in, out := t.TempDir(), t.TempDir()
			o := tt.setup(t, in, out)
			before := readDir(t, out)
			var stdout, stderr bytes.Buffer
			o.Stdout, o.Stderr = &stdout, &stderr
			err := Run(o)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error = %v, want it to contain %q", err, tt.wantErr)
			}
			if after := readDir(t, out); !reflect.DeepEqual(before, after) {
				t.Errorf("output directory changed on error: %v", after)
			}
			if stdout.Len() != 0 {
				t.Errorf("stdout written on error:\n%s", stdout.String())
			}
		})
	}
}
