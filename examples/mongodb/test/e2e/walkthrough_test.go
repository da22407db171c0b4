package e2e

import (
	"strings"
	"testing"

	"github.com/meshplane/meshplane/examples/internal/exampletest"
	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// TestWalkthrough runs the commands of examples/mongodb/README.md.
func TestWalkthrough(t *testing.T) {
	s := framework.SharedServer(t)
	framework.SkipIfExternal(t, "the walk-through creates fixed workspace names in root")
	out := exampletest.Walkthrough(t, s, "mongodb", map[string]string{
		"provider-kubeconfig": "providers ./cmd/provider-kubeconfig",
		"mongodb-provider":    "examples ./mongodb/cmd/mongodb-provider",
	})
	for _, want := range []string{
		"mongodb.examples.meshplane.io/name=orders", // the labelled downstream object
		"condition met",  // kubectl wait Synced, Ready
		"mongodb://app:", // the Secret's uri
		"-svc.mongodb-provider.svc.cluster.local:27017/?replicaSet=mdb-",
		`mongodb.mongodb.examples.meshplane.io "orders" deleted`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("walk-through output lacks %q", want)
		}
	}
	// After the deletion, the downstream listing is empty.
	if i := strings.LastIndex(out, "get mongodbcommunity,secrets"); i < 0 || !strings.Contains(out[i:], "No resources found") {
		t.Errorf("the downstream objects are not gone after the deletion")
	}
}
