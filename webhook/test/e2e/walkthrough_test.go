package e2e

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// TestAuthorizationWalkthrough runs the commands of docs/authorization.md
// (the grant, list and revoke workflow) against a platform of its own.
func TestAuthorizationWalkthrough(t *testing.T) {
	p := startPlatform(t)
	doc, err := filepath.Abs("../../../docs/authorization.md")
	if err != nil {
		t.Fatal(err)
	}
	out := framework.RunWalkthrough(t, doc, t.TempDir(), []string{
		"KUBECONFIG=" + p.kubeconfig, "CORE_URL=" + p.env["CORE_URL"], "GRAPHQL_URL=" + p.env["GRAPHQL_URL"], "KUBECACHEDIR=" + t.TempDir(),
	}, 5*time.Minute)
	t.Logf("walk-through output (tail):\n%s", tailLines(out, 30))
}

func tailLines(s string, n int) string {
	lines := 0
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '\n' {
			lines++
			if lines > n {
				return s[i+1:]
			}
		}
	}
	return s
}
