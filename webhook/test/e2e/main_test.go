// Package e2e tests the whole authorization chain as `make run` starts it:
// the core asks the rebac-authz-webhook, which asks OpenFGA, whose store and
// tuples the security-operator keeps from Store objects.
package e2e

import (
	"fmt"
	"os"
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
	if binDir, err = framework.PlatformBinDir(); err != nil {
		return 0, err
	}
	defer os.RemoveAll(binDir)
	return m.Run(), nil
}
