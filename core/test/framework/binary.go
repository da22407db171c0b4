// Package framework starts meshplane servers for end-to-end tests and offers
// helpers to talk to them with kubectl, client-go and plain net/http.
//
// Environment variables:
//
//	MESHPLANE_BIN                path of the meshplane binary (default <repo root>/bin/meshplane;
//	                             built from core/ into a temporary directory when missing)
//	MESHPLANE_E2E_START_TIMEOUT  how long to wait for /readyz (Go duration, default 3m)
//	MESHPLANE_E2E_ARGS           extra arguments appended to `meshplane start` (space separated)
//	MESHPLANE_E2E_KEEP           if set to a non-empty value, root directories are never removed
//	KUBECTL_WS_BIN               path of the kubectl-ws plugin (default <repo root>/bin/kubectl-ws;
//	                             built from core/ into a temporary directory when missing)
//	KUBECTL                      kubectl binary (default: kubectl from PATH)
package framework

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"
)

var (
	binaryOnce sync.Once
	binaryPath string
	binaryErr  error
	// builtDirs are the temporary directories holding binaries built by
	// the framework; removed by CleanupBinary.
	builtMu   sync.Mutex
	builtDirs []string
)

// RepoRoot returns the repository root: the first directory, walking up from
// the working directory, that holds a go.work file.
func RepoRoot() (string, error) {
	start, err := os.Getwd()
	if err != nil {
		return "", err
	}
	dir := start
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.work")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.work found in %s or any parent directory", start)
		}
		dir = parent
	}
}

// Binary returns the path of the meshplane binary to test. It honours
// MESHPLANE_BIN, then <repo root>/bin/meshplane, and otherwise builds the
// binary once per test process with `go build ./cmd/meshplane` run in core/.
func Binary() (string, error) {
	binaryOnce.Do(func() {
		binaryPath, binaryErr = resolveBinary()
	})
	return binaryPath, binaryErr
}

func resolveBinary() (string, error) {
	return resolveOrBuild("MESHPLANE_BIN", "meshplane", "./cmd/meshplane")
}

// resolveOrBuild returns the binary named by the environment variable envVar,
// else <repo root>/bin/<name>, else builds it from pkg (relative to core/)
// into a temporary directory removed by CleanupBinary.
func resolveOrBuild(envVar, name, pkg string) (string, error) {
	if p := os.Getenv(envVar); p != "" {
		abs, err := filepath.Abs(p)
		if err != nil {
			return "", err
		}
		if err := checkExecutable(abs); err != nil {
			return "", fmt.Errorf("%s=%s: %w", envVar, p, err)
		}
		return abs, nil
	}
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	def := filepath.Join(root, "bin", name)
	if checkExecutable(def) == nil {
		return def, nil
	}

	dir, err := os.MkdirTemp("", "meshplane-e2e-bin-")
	if err != nil {
		return "", err
	}
	out := filepath.Join(dir, name)
	goBin, err := exec.LookPath("go")
	if err != nil {
		if goroot := os.Getenv("GOROOT"); goroot != "" {
			goBin = filepath.Join(goroot, "bin", "go")
		} else {
			os.RemoveAll(dir)
			return "", fmt.Errorf("%s does not exist and no go toolchain found to build it: %w", def, err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	fmt.Fprintf(os.Stderr, "framework: %s not found, building %s into %s (set %s to skip)\n", def, name, out, envVar)
	started := time.Now()
	cmd := exec.CommandContext(ctx, goBin, "build", "-o", out, pkg)
	cmd.Dir = filepath.Join(root, "core")
	if output, err := cmd.CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return "", fmt.Errorf("building %s (go build -o %s %s in %s) failed: %v\n%s", name, out, pkg, cmd.Dir, err, output)
	}
	fmt.Fprintf(os.Stderr, "framework: built %s in %s\n", name, time.Since(started).Round(time.Second))
	builtMu.Lock()
	builtDirs = append(builtDirs, dir)
	builtMu.Unlock()
	return out, nil
}

// CleanupBinary removes the binaries that the framework built itself. RunMain
// calls it; call it yourself when not using RunMain.
func CleanupBinary() {
	builtMu.Lock()
	defer builtMu.Unlock()
	for _, d := range builtDirs {
		os.RemoveAll(d)
	}
	builtDirs = nil
}

func checkExecutable(p string) error {
	st, err := os.Stat(p)
	if err != nil {
		return err
	}
	if st.IsDir() {
		return fmt.Errorf("%s is a directory", p)
	}
	if st.Mode()&0o111 == 0 {
		return fmt.Errorf("%s is not executable", p)
	}
	return nil
}

// KubectlBinary returns the kubectl to run: $KUBECTL or kubectl from PATH.
func KubectlBinary() string {
	if k := os.Getenv("KUBECTL"); k != "" {
		return k
	}
	if p, err := exec.LookPath("kubectl"); err == nil {
		return p
	}
	return "/usr/bin/kubectl"
}
