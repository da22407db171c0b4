package install

import (
	"bytes"
	"strings"
	"testing"

	"github.com/meshplane/meshplane/charts"
)

// The charts the binary embeds render with their defaults and with values,
// and their schema refuses a typo.
func TestRenderEmbeddedCharts(t *testing.T) {
	o := NewOptions(charts.FS)
	o.Set = []string{"core.service.type=NodePort"}
	var out bytes.Buffer
	if err := Render(o, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"kind: StatefulSet\nmetadata:\n  name: meshplane-core\n",
		"name: meshplane-openfga\n", "name: meshplane-rebac-authz-webhook\n", "name: meshplane-account-operator\n",
		"name: meshplane-security-operator\n", "name: meshplane-graphql-gateway\n", "name: meshplane-bootstrap\n",
		"name: meshplane-admin-kubeconfig\n", "type: NodePort\n",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("embedded charts' manifests lack %q", want)
		}
	}
	o.Set = []string{"core.replicaz=2"}
	if err := Render(o, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "values.schema.json") || !strings.Contains(err.Error(), "replicaz") {
		t.Errorf("core.replicaz=2: error = %v, want a values.schema.json refusal naming replicaz", err)
	}
}
