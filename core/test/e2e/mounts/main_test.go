// Package mounts tests workspace mounts end to end with kubectl: a
// Workspace whose spec.mount.ref names a mount object is proxied to the
// object's status.URL while it is Ready.
package mounts

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// mountCAFile is the core's --mount-ca-file: the test's mount server
// writes its certificate there once it runs (the core re-reads it).
var mountCAFile string

// TestMain shares one server between the tests of this package; each
// test works in its own organization.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "meshplane-mounts-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	mountCAFile = filepath.Join(dir, "mount-ca.pem")
	code := framework.RunMain(m, framework.WithExtraArgs("--mount-ca-file", mountCAFile))
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

func server(t *testing.T) *framework.Server {
	t.Helper()
	return framework.SharedServer(t)
}
