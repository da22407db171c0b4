// Package quota tests ResourceQuota end to end: admission refuses what
// exceeds a quota of the request's own workspace with kube's 403, the
// controller keeps status.used, and kcp's cluster-scoped quota counts
// Workspaces.
package quota

import (
	"os"
	"testing"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// TestMain shares one meshplane server between the tests of this package.
func TestMain(m *testing.M) {
	os.Exit(framework.RunMain(m))
}

func server(t *testing.T) *framework.Server {
	t.Helper()
	return framework.SharedServer(t)
}
