package workspaces

import (
	"os"
	"testing"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// TestMain shares one meshplane server between the tests of this package
// (started on first use, stopped at the end). Tests isolate themselves by
// using their own logical cluster or workspace names (framework.UniqueName).
// Tests run in parallel (t.Parallel): each works in its own organizations,
// workspace types and user homes (carol's for TestHomeWorkspace, alice's and
// bob's for TestTenantIsolation).
func TestMain(m *testing.M) {
	os.Exit(framework.RunMain(m))
}

// server returns the shared server.
func server(t *testing.T) *framework.Server {
	t.Helper()
	return framework.SharedServer(t)
}
