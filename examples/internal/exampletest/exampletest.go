// Package exampletest is what the example providers' end-to-end tests
// share on top of sdk/testing/framework: a provider workspace with an
// example's export, the provider's scoped kubeconfig, admin kubeconfigs for
// a workspace, the provider process, and the README walk-through runner.
package exampletest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/meshplane/meshplane/sdk/process"
	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// Example is the folder of an example under examples/ (e.g. "mongodb").
func Example(t testing.TB, name string) string {
	t.Helper()
	root, err := framework.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(root, "examples", name)
}

// SetupProvider creates the provider workspace root:<name> and applies the
// example's config/kcp (APIResourceSchema, APIExport, the grant of bind) there.
func SetupProvider(t testing.TB, s *framework.Server, example, name string) framework.Workspace {
	t.Helper()
	ws := s.CreateWorkspaces(t, "root", name)[0]
	s.KubectlFor(ws.Path).Run(t, "apply", "-f", filepath.Join(Example(t, example), "config", "kcp"))
	return ws
}

// ProviderKubeconfig runs `provider-kubeconfig --service-account sa` for
// the provider workspace and slice (as an admin) and returns the written
// kubeconfig: the scoped credential the provider runs with. The slice
// needs a bound consumer to have a URL.
func ProviderKubeconfig(t testing.TB, s *framework.Server, provider framework.Workspace, slice, sa string) string {
	t.Helper()
	bin, err := framework.Binary("provider-kubeconfig", "providers", "./cmd/provider-kubeconfig")
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "provider.kubeconfig")
	cmd := exec.Command(bin, "--kubeconfig", s.Kubeconfig, "--context", "base", "--workspace", provider.Path,
		"--endpoint-slice", slice, "--service-account", sa, "-o", out)
	if combined, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("provider-kubeconfig: %v\n%s", err, combined)
	}
	return out
}

// AdminKubeconfig writes the admin kubeconfig with context root pointed at
// the workspace path (current context root) and returns its path.
func AdminKubeconfig(t testing.TB, s *framework.Server, path string) string {
	t.Helper()
	cfg, err := clientcmd.LoadFromFile(s.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	ctx := cfg.Contexts["root"]
	if ctx == nil {
		t.Fatalf("%s has no context root", s.Kubeconfig)
	}
	cfg.Clusters[ctx.Cluster].Server = s.ClusterURL(path)
	cfg.CurrentContext = "root"
	out := filepath.Join(t.TempDir(), strings.ReplaceAll(path, ":", "_")+".kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, out); err != nil {
		t.Fatal(err)
	}
	return out
}

// Provider is a running example provider process.
type Provider struct {
	bin, log   string
	args       []string
	p          *process.Process
	MetricsURL string
}

// StartProvider starts an example provider binary (name, built from pkg in
// module examples) with args plus free metrics and health addresses,
// waits for /readyz, and stops it at the end of the test.
func StartProvider(t testing.TB, name, pkg string, args ...string) *Provider {
	t.Helper()
	bin, err := framework.Binary(name, "examples", pkg)
	if err != nil {
		t.Fatal(err)
	}
	pr := &Provider{bin: bin, args: args, log: filepath.Join(t.TempDir(), name+".log")}
	pr.Start(t)
	t.Cleanup(func() {
		if pr.p != nil && pr.p.Running() {
			_ = pr.p.Stop(30 * time.Second)
		}
		if t.Failed() {
			b, _ := os.ReadFile(pr.log)
			t.Logf("%s log:\n%s", name, tail(string(b), 8000))
		}
	})
	return pr
}

// Start (re)starts the process with the same arguments.
func (pr *Provider) Start(t testing.TB) {
	t.Helper()
	ports, err := process.FreePorts(2)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(pr.log, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	args := append([]string{"--metrics-bind-address", "127.0.0.1:" + strconv.Itoa(ports[0]),
		"--health-probe-bind-address", "127.0.0.1:" + strconv.Itoa(ports[1])}, pr.args...)
	cmd := exec.Command(pr.bin, args...)
	cmd.Stdout, cmd.Stderr = f, f
	if pr.p, err = process.StartProcess(cmd); err != nil {
		t.Fatal(err)
	}
	pr.MetricsURL = "http://127.0.0.1:" + strconv.Itoa(ports[0])
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := process.WaitReady(ctx, "http://127.0.0.1:"+strconv.Itoa(ports[1])+"/readyz", 200*time.Millisecond, pr.p.Exited()); err != nil {
		b, _ := os.ReadFile(pr.log)
		t.Fatalf("%s not ready: %v\n%s", filepath.Base(pr.bin), err, tail(string(b), 8000))
	}
}

// Stop stops the process (SIGTERM) and waits for it.
func (pr *Provider) Stop(t testing.TB) {
	t.Helper()
	if err := pr.p.Stop(60 * time.Second); err != nil {
		t.Fatalf("stopping %s: %v", filepath.Base(pr.bin), err)
	}
}

// Log is the provider's output so far.
func (pr *Provider) Log() string {
	b, _ := os.ReadFile(pr.log)
	return string(b)
}

// Engaged is the provider's /engaged list.
func (pr *Provider) Engaged(t testing.TB) []string {
	t.Helper()
	resp, err := http.Get(pr.MetricsURL + "/engaged")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var out []string
	if err := json.Unmarshal(body, &out); err != nil {
		t.Fatalf("/engaged: %v: %s", err, body)
	}
	return out
}

// Walkthrough runs the ```sh blocks of the example's README.md against s,
// as a user who ran `make run` would: in a directory standing for the
// repository's root (examples/ and the named binaries under bin/), with
// KUBECONFIG and CORE_URL set. Processes the walk-through leaves behind
// (the pid files it writes under $TMPDIR) are stopped at the end.
func Walkthrough(t testing.TB, s *framework.Server, example string, binaries map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	root, err := framework.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "examples"), filepath.Join(dir, "examples")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, mod := range binaries {
		module, pkg, _ := strings.Cut(mod, " ")
		bin, err := framework.Binary(name, module, pkg)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(bin, filepath.Join(dir, "bin", name)); err != nil {
			t.Fatal(err)
		}
	}
	tmp := t.TempDir()
	t.Cleanup(func() { stopLeftovers(t, tmp) })
	env := []string{"KUBECONFIG=" + s.Kubeconfig, "CORE_URL=" + s.BaseURL, "TMPDIR=" + tmp,
		"KUBECACHEDIR=" + filepath.Join(tmp, "kubecache")}
	if k := os.Getenv("KUBECTL"); k != "" {
		env = append(env, "PATH="+filepath.Dir(k)+string(os.PathListSeparator)+os.Getenv("PATH"))
	}
	out := framework.RunWalkthrough(t, filepath.Join(root, "examples", example, "README.md"), dir, env, 5*time.Minute)
	t.Logf("walk-through output:\n%s", tail(out, 6000))
	return out
}

// stopLeftovers kills processes whose pid files the walk-through wrote
// under dir and that still run (a failed walk-through skips its kill).
func stopLeftovers(t testing.TB, dir string) {
	files, _ := filepath.Glob(filepath.Join(dir, "*", "*.pid"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || pid <= 1 {
			continue
		}
		if p, err := os.FindProcess(pid); err == nil && p.Signal(sigZero) == nil {
			t.Logf("stopping pid %d left by the walk-through (%s)", pid, f)
			_ = p.Kill()
		}
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}

// Must fails the test on err.
func Must(t testing.TB, err error, what string, args ...any) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", fmt.Sprintf(what, args...), err)
	}
}
