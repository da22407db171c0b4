// Package gc tests the garbage collector end to end: ownerReferences
// with kubectl delete --cascade=background|foreground|orphan, over
// built-in, custom and cluster-scoped kinds, inside one logical cluster.
package gc

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
