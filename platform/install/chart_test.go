package install

import (
	"testing"
	"testing/fstest"
)

// A file:// dependency comes from its directory, not from a stale copy that
// `helm dependency build` left under charts/; .helmignore applies.
func TestLoadChartFileDependencies(t *testing.T) {
	fsys := fstest.MapFS{
		"umbrella/Chart.yaml":                 {Data: []byte("apiVersion: v2\nname: umbrella\nversion: 0.1.0\ndependencies:\n  - name: part\n    version: 0.2.0\n    repository: file://../part\n")},
		"umbrella/.helmignore":                {Data: []byte("*.orig\n")},
		"umbrella/templates/a.yaml":           {Data: []byte("kind: ConfigMap\n")},
		"umbrella/templates/a.yaml.orig":      {Data: []byte("kind: Broken\n")},
		"umbrella/charts/part/Chart.yaml":     {Data: []byte("apiVersion: v2\nname: part\nversion: 0.1.0\n")},
		"part/Chart.yaml":                     {Data: []byte("apiVersion: v2\nname: part\nversion: 0.2.0\n")},
		"part/templates/b.yaml":               {Data: []byte("kind: Secret\n")},
		"outside/Chart.yaml":                  {Data: []byte("apiVersion: v2\nname: outside\nversion: 0.1.0\ndependencies:\n  - name: x\n    version: 0.1.0\n    repository: file://../../x\n")},
		"outside/templates/c.yaml":            {Data: []byte("kind: ConfigMap\n")},
		"umbrella/templates/.hidden.yaml.swp": {Data: []byte("junk")},
	}
	ch, err := loadChart(fsys, "umbrella")
	if err != nil {
		t.Fatal(err)
	}
	deps := ch.Dependencies()
	if len(deps) != 1 || deps[0].Metadata.Version != "0.2.0" || len(deps[0].Templates) != 1 {
		t.Fatalf("dependencies = %+v, want part 0.2.0 from ../part with its template", deps)
	}
	for _, tpl := range ch.Templates {
		if tpl.Name != "templates/a.yaml" {
			t.Errorf("template %s loaded, want only templates/a.yaml (.helmignore)", tpl.Name)
		}
	}
	if _, err := loadChart(fsys, "outside"); err == nil {
		t.Error("a file:// dependency outside the charts directory was loaded")
	}
}
