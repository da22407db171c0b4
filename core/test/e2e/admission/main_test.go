// Package admission tests admission webhooks and policies per logical
// cluster against a real core, with kubectl and client-go, and real HTTPS
// webhooks the tests start on 127.0.0.1.
package admission

import (
	"os"
	"testing"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// TestMain shares one meshplane server between the tests of this package.
// Every test works in logical clusters or workspaces of its own.
func TestMain(m *testing.M) {
	os.Exit(framework.RunMain(m))
}

func server(t testing.TB) *framework.Server {
	t.Helper()
	return framework.SharedServer(t)
}
