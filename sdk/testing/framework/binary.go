package framework

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

var (
	binariesMu sync.Mutex
	binaries   = map[string]*binaryResult{}
	// builtDirs are the temporary directories holding binaries built by the
	// kit; removed by CleanupBinaries.
	builtDirs []string
)

type binaryResult struct {
	once sync.Once
	path string
	err  error
}

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

// BinaryEnv is the environment variable naming a prebuilt binary: the name
// upper-cased, '-' replaced by '_', plus "_BIN" (kubectl-ws: KUBECTL_WS_BIN).
func BinaryEnv(name string) string {
	return strings.ToUpper(strings.ReplaceAll(name, "-", "_")) + "_BIN"
}

// Binary returns the path of the program name: $<NAME>_BIN (see BinaryEnv),
// else <repo root>/bin/<name>, else it is built once per process with
// `go build -o <temp dir>/<name> pkg` run in <repo root>/<module>. For
// example Binary("apigen", "core", "./cmd/apigen").
func Binary(name, module, pkg string) (string, error) {
	binariesMu.Lock()
	r, ok := binaries[name]
	if !ok {
		r = &binaryResult{}
		binaries[name] = r
	}
	binariesMu.Unlock()
	r.once.Do(func() { r.path, r.err = resolveOrBuild(name, module, pkg) })
	return r.path, r.err
}

// MeshplaneBinary is Binary for the core server: $MESHPLANE_BIN, else
// bin/meshplane, else built from core/cmd/meshplane.
func MeshplaneBinary() (string, error) {
	return Binary("meshplane", "core", "./cmd/meshplane")
}

func resolveOrBuild(name, module, pkg string) (string, error) {
	envVar := BinaryEnv(name)
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
		return "", fmt.Errorf("finding %s (set %s): %w", name, envVar, err)
	}
	def := filepath.Join(root, "bin", name)
	if checkExecutable(def) == nil {
		return def, nil
	}

	goBin, err := exec.LookPath("go")
	if err != nil {
		goroot := os.Getenv("GOROOT")
		if goroot == "" {
			return "", fmt.Errorf("%s does not exist and no go toolchain found to build it: %w", def, err)
		}
		goBin = filepath.Join(goroot, "bin", "go")
	}
	dir, err := os.MkdirTemp("", "meshplane-bin-")
	if err != nil {
		return "", err
	}
	out := filepath.Join(dir, name)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	fmt.Fprintf(os.Stderr, "framework: %s not found, building %s into %s (set %s to skip)\n", def, name, out, envVar)
	started := time.Now()
	cmd := exec.CommandContext(ctx, goBin, "build", "-o", out, pkg)
	cmd.Dir = filepath.Join(root, module)
	if output, err := cmd.CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return "", fmt.Errorf("building %s (go build -o %s %s in %s): %v\n%s", name, out, pkg, cmd.Dir, err, output)
	}
	fmt.Fprintf(os.Stderr, "framework: built %s in %s\n", name, time.Since(started).Round(time.Second))
	rememberTempDir(dir)
	return out, nil
}

func rememberTempDir(dir string) {
	binariesMu.Lock()
	defer binariesMu.Unlock()
	builtDirs = append(builtDirs, dir)
}

// CleanupBinaries removes the binaries (and plugin directories) that the kit
// made itself. RunMain calls it; call it yourself when not using RunMain.
func CleanupBinaries() {
	binariesMu.Lock()
	defer binariesMu.Unlock()
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
