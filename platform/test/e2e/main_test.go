// Package e2e tests the platform launcher (`make run`) as a user runs it:
// the real meshplane-platform binary, the real core, the real kubectl.
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
	binDir      string // a directory holding meshplane and account-operator, for --bin-dir
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
	core, err := framework.MeshplaneBinary()
	if err != nil {
		return 0, err
	}
	// The launcher finds the core beside itself or in --bin-dir.
	tmp, err := os.MkdirTemp("", "meshplane-platform-e2e-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(tmp)
	binDir = tmp
	if err := os.Symlink(core, filepath.Join(binDir, "meshplane")); err != nil {
		return 0, err
	}
	// The platform's components: $<NAME>_BIN (make test sets them), else
	// bin/<name>, else built from their module.
	for _, c := range []struct{ name, module, pkg string }{
		{"account-operator", "operators", "./cmd/account-operator"},
		{"provider-kubeconfig", "providers", "./cmd/provider-kubeconfig"},
		{"graphql-gateway", "gateway", "./cmd/graphql-gateway"},
		{"openfga", "operators", "./cmd/openfga"},
		{"security-operator", "operators", "./cmd/security-operator"},
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
