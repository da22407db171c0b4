package charts

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// repoRoot is the repository's root (the charts module is one level down).
func repoRoot(t testing.TB) string {
	t.Helper()
	abs, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

var helmOnce struct {
	sync.Once
	path string
	err  error
}

// helm is the pinned helm CLI: $HELM_BIN, else bin/helm, installed by
// scripts/install-helm.sh when missing.
func helm(t testing.TB) string {
	t.Helper()
	helmOnce.Do(func() {
		if p := os.Getenv("HELM_BIN"); p != "" {
			helmOnce.path = p
			return
		}
		root := repoRoot(t)
		p := filepath.Join(root, "bin", "helm")
		if _, err := os.Stat(p); err != nil {
			out, err := exec.Command(filepath.Join(root, "scripts", "install-helm.sh")).CombinedOutput()
			if err != nil {
				helmOnce.err = fmt.Errorf("scripts/install-helm.sh: %v: %s", err, out)
				return
			}
		}
		helmOnce.path = p
	})
	if helmOnce.err != nil {
		t.Fatal(helmOnce.err)
	}
	return helmOnce.path
}

// runHelm runs helm with args; HOME and the helm caches are the test's.
func runHelm(t testing.TB, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, helm(t), args...)
	home := t.TempDir()
	cmd.Env = append(os.Environ(), "HOME="+home, "HELM_CACHE_HOME="+filepath.Join(home, "cache"),
		"HELM_CONFIG_HOME="+filepath.Join(home, "config"), "HELM_DATA_HOME="+filepath.Join(home, "data"))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("helm %s: %v: %s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String(), nil
}

// umbrellaDir writes the umbrella chart with its dependencies in place
// (UmbrellaFiles, as `meshplane-platform install` loads it) into a
// temporary directory and returns the chart's path.
func umbrellaDir(t testing.TB) string {
	t.Helper()
	files, err := UmbrellaFiles()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), Umbrella)
	for _, f := range files {
		p := filepath.Join(dir, filepath.FromSlash(f.Name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// render is `helm template` of the umbrella chart as release "mp" in
// namespace "meshplane-system" with args (--set ..., --api-versions ...).
func render(t testing.TB, chart string, args ...string) (string, error) {
	t.Helper()
	return runHelm(t, append([]string{"template", "mp", chart, "--namespace", "meshplane-system"}, args...)...)
}
