package apis

import (
	"os"
	"testing"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// TestMain shares one meshplane server between the tests of this package
// (started on first use, stopped at the end). Tests isolate themselves by
// using their own logical cluster or workspace names (framework.UniqueName).
// Tests run in parallel (t.Parallel) except the one that sets the global
// klog logger: every test works in its own organizations or workspace types.
func TestMain(m *testing.M) {
	os.Exit(framework.RunMain(m))
}

// server returns the shared server.
func server(t *testing.T) *framework.Server {
	t.Helper()
	return framework.SharedServer(t)
}
