// Package isolation is the tenant-isolation suite: it starts the whole
// platform once through the launcher (two shards behind the front proxy),
// sets up organizations and accounts the way users do, and then plays
// attacker against them. Every probe says who tries what and what must come
// of it (refused, or allowed without effect on the victim, checked by
// reading the victim's state as its owner or the admin). The suite prints
// `isolation: N attempts, M leaks` and fails listing every leak.
package isolation

import (
	"fmt"
	"os"
	"testing"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

var (
	launcherBin string // meshplane-platform
	binDir      string // the platform's binaries and the front proxy, for --bin-dir
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
	if binDir, err = framework.PlatformBinDir(framework.BinarySpec{Name: "front-proxy", Module: "proxy", Pkg: "./cmd/front-proxy"}); err != nil {
		return 0, err
	}
	defer os.RemoveAll(binDir)
	return m.Run(), nil
}
