// Package e2e tests the whole authorization chain as `make run` starts it:
// the core asks the rebac-authz-webhook, which asks OpenFGA, whose store and
// tuples the security-operator keeps from Store objects.
package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

var (
	launcherBin string // meshplane-platform
	binDir      string // the platform's binaries, for --bin-dir
)

func TestMain(m *testing.M) {
	code, err := run(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = 1
	}
	os.Exit(code)
}

func run(m *testing.M) (int, error) {
	defer framework.CleanupBinaries()
	var err error
	if launcherBin, err = framework.Binary("meshplane-platform", "platform", "./cmd/meshplane-platform"); err != nil {
		return 0, err
	}
	if binDir, err = os.MkdirTemp("", "rebac-e2e-bin-"); err != nil {
		return 0, err
	}
	defer os.RemoveAll(binDir)
	core, err := framework.MeshplaneBinary()
	if err != nil {
		return 0, err
	}
	if err := os.Symlink(core, filepath.Join(binDir, "meshplane")); err != nil {
		return 0, err
	}
	for _, c := range []struct{ name, module, pkg string }{
		{"account-operator", "operators", "./cmd/account-operator"},
		{"security-operator", "operators", "./cmd/security-operator"},
		{"openfga", "operators", "./cmd/openfga"},
		{"graphql-gateway", "gateway", "./cmd/graphql-gateway"},
		{"rebac-authz-webhook", "webhook", "./cmd/rebac-authz-webhook"},
	} {
		bin, err := framework.Binary(c.name, c.module, c.pkg)
		if err != nil {
			return 0, err
		}
		if err := os.Symlink(bin, filepath.Join(binDir, c.name)); err != nil {
			return 0, err
		}
	}
	return m.Run(), nil
}
