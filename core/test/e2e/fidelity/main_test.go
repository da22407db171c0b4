// Package fidelity tests kcp behaviours that tools and tests written for
// kcp rely on, as kcp v0.32 shows them.
package fidelity

import (
	"os"
	"testing"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// TestMain shares one meshplane server between the tests of this package
// (started on first use, stopped at the end). Tests run in parallel, each
// in its own organization.
func TestMain(m *testing.M) {
	os.Exit(framework.RunMain(m))
}

// server returns the shared server.
func server(t *testing.T) *framework.Server {
	t.Helper()
	return framework.SharedServer(t)
}
