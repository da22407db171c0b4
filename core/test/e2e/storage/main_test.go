package storage

import (
	"os"
	"testing"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// TestMain shares one meshplane server between the tests of this package
// (started on first use, stopped at the end). Tests isolate themselves by
// using their own logical cluster or workspace names (framework.UniqueName).
func TestMain(m *testing.M) {
	os.Exit(framework.RunMain(m))
}

// server returns the shared server.
func server(t *testing.T) *framework.Server {
	t.Helper()
	return framework.SharedServer(t)
}
