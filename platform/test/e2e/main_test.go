// Package e2e tests the platform launcher (`make run`) as a user runs it:
// the real meshplane-platform binary, the real core, the real kubectl.
package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
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
	tmp, err := os.MkdirTemp("", "meshplane-platform-e2e-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(tmp)
	launcherBin = os.Getenv("MESHPLANE_PLATFORM_BIN")
	if launcherBin == "" {
		launcherBin = filepath.Join(tmp, "meshplane-platform")
		build := exec.Command("go", "build", "-o", launcherBin, "../../cmd/meshplane-platform")
		if out, err := build.CombinedOutput(); err != nil {
			return 0, fmt.Errorf("building meshplane-platform: %v\n%s", err, out)
		}
	}
	core := os.Getenv("MESHPLANE_BIN")
	if core == "" {
		return 0, fmt.Errorf("MESHPLANE_BIN must name the meshplane binary (make test sets it)")
	}
	binDir = filepath.Join(tmp, "bin")
	if err := os.Mkdir(binDir, 0o755); err != nil {
		return 0, err
	}
	abs, err := filepath.Abs(core)
	if err != nil {
		return 0, err
	}
	if err := os.Symlink(abs, filepath.Join(binDir, "meshplane")); err != nil {
		return 0, err
	}
	// The platform's components: $<NAME>_BIN (make test sets them), else
	// built from their module.
	for _, c := range []struct{ name, env, module, pkg string }{
		{"account-operator", "ACCOUNT_OPERATOR_BIN", "operators", "./cmd/account-operator"},
		{"provider-kubeconfig", "PROVIDER_KUBECONFIG_BIN", "providers", "./cmd/provider-kubeconfig"},
	} {
		bin := os.Getenv(c.env)
		if bin == "" {
			bin = filepath.Join(binDir, c.name)
			build := exec.Command("go", "build", "-o", bin, c.pkg)
			build.Dir = filepath.Join("..", "..", "..", c.module)
			if out, err := build.CombinedOutput(); err != nil {
				return 0, fmt.Errorf("building %s: %v\n%s", c.name, err, out)
			}
			continue
		}
		abs, err := filepath.Abs(bin)
		if err != nil {
			return 0, err
		}
		if err := os.Symlink(abs, filepath.Join(binDir, c.name)); err != nil {
			return 0, err
		}
	}
	return m.Run(), nil
}
