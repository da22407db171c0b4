// Package e2e tests the platform launcher (`make run`) as a user runs it:
// the real meshplane-platform binary, the real core, the real kubectl.
package e2e

import (
	"fmt"
	"os"
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
	// The launcher finds the components beside itself or in --bin-dir.
	// front-proxy: for --shards 2; mongodb-provider: --examples mongodb.
	if binDir, err = framework.PlatformBinDir(framework.BinarySpec{Name: "front-proxy", Module: "proxy", Pkg: "./cmd/front-proxy"},
		framework.BinarySpec{Name: "mongodb-provider", Module: "examples", Pkg: "./mongodb/cmd/mongodb-provider"}); err != nil {
		return 0, err
	}
	defer os.RemoveAll(binDir)
	return m.Run(), nil
}
