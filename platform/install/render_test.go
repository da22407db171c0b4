package install

import (
	"bytes"
	"strings"
	"testing"
)

const testChart = "testdata/charts/meshplane"

func renderTest(t *testing.T, change func(*Options)) (string, error) {
	t.Helper()
	o := NewOptions(nil)
	o.Chart = testChart
	change(o)
	var out bytes.Buffer
	err := Render(o, &out)
	return out.String(), err
}

// The umbrella chart's file:// dependency is loaded from next to it, --set
// reaches the subchart, hooks are printed.
func TestRenderDryRun(t *testing.T) {
	out, err := renderTest(t, func(o *Options) { o.Set = []string{"core.replicas=3", "core.logLevel=5"} })
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"kind: StatefulSet", "name: meshplane-core", "replicas: 3", `"-v=5"`,
		"name: meshplane-gateway", "kind: Job", "name: meshplane-bootstrap",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("rendered manifests lack %q:\n%s", want, out)
		}
	}
}

func TestRenderRefusesSchemaTypos(t *testing.T) {
	for _, set := range []string{"core.replica=3", "bootstrap.enable=true", "core.serviceType=Ingress"} {
		_, err := renderTest(t, func(o *Options) { o.Set = []string{set} })
		if err == nil || !strings.Contains(err.Error(), "values.schema.json") {
			t.Errorf("--set %s: error = %v, want a refusal by values.schema.json", set, err)
		}
	}
}

func TestRenderNeedsAChart(t *testing.T) {
	o := NewOptions(nil)
	if err := Render(o, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "--chart") {
		t.Errorf("no embedded charts and no --chart: error = %v, want one asking for --chart", err)
	}
	o.Chart = t.TempDir()
	if err := Render(o, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "no Chart.yaml") {
		t.Errorf("--chart of an empty directory: error = %v, want \"no Chart.yaml\"", err)
	}
}
