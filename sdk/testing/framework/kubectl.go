package framework

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/meshplane/meshplane/sdk/process"
)

// DefaultKubectlTimeout bounds every foreground kubectl invocation.
const DefaultKubectlTimeout = 90 * time.Second

// Kubectl runs kubectl with a fixed kubeconfig and global flags (for example
// a context and a --server pointing at one logical cluster).
type Kubectl struct {
	// Kubeconfig is passed as --kubeconfig.
	Kubeconfig string
	// GlobalArgs come right after --kubeconfig, before the command's args.
	GlobalArgs []string
	// CacheDir is used as KUBECACHEDIR (discovery and HTTP cache), so that no
	// cache is shared with other servers or with the user's ~/.kube.
	CacheDir string
	// Timeout bounds one invocation (DefaultKubectlTimeout when zero).
	Timeout time.Duration
	// KubeconfigEnv passes Kubeconfig as $KUBECONFIG instead of
	// --kubeconfig. Plugins need it: kubectl only dispatches to a plugin
	// when the plugin name comes before any flag.
	KubeconfigEnv bool
	// PathPrepend are directories put in front of $PATH, e.g. the one
	// holding the kubectl-ws plugin.
	PathPrepend []string
}

// Kubectl runs kubectl with the admin kubeconfig and its current context
// (`root`) and returns stdout; the test fails (with stderr) if kubectl fails.
func (s *Server) Kubectl(t testing.TB, args ...string) string {
	t.Helper()
	return s.AdminKubectl().Run(t, args...)
}

// KubectlErr is Kubectl for negative tests: it returns stdout, stderr and the
// error instead of failing.
func (s *Server) KubectlErr(t testing.TB, args ...string) (string, string, error) {
	t.Helper()
	return s.AdminKubectl().RunErr(t, args...)
}

// AdminKubectl uses admin.kubeconfig as written by the server (current context).
func (s *Server) AdminKubectl() *Kubectl {
	return &Kubectl{Kubeconfig: s.Kubeconfig, CacheDir: s.kubectlCacheDir()}
}

// KubectlFor returns a kubectl acting as the shard admin (context shard-base,
// group system:masters) on logical cluster name, through
// --server https://127.0.0.1:<port>/clusters/<name>. Use "*" for the wildcard
// endpoint and "" for the base URL without a cluster prefix.
func (s *Server) KubectlFor(cluster string) *Kubectl {
	return &Kubectl{
		Kubeconfig: s.Kubeconfig,
		GlobalArgs: []string{"--context", "shard-base", "--server", s.ClusterURL(cluster)},
		CacheDir:   s.kubectlCacheDir(),
	}
}

// KubectlAsUser returns a kubectl acting as a token user on a cluster, using
// a kubeconfig written by WriteUserKubeconfig.
func (s *Server) KubectlAsUser(t testing.TB, user, cluster string) *Kubectl {
	t.Helper()
	return &Kubectl{Kubeconfig: s.WriteUserKubeconfig(t, user, cluster), CacheDir: s.kubectlCacheDir()}
}

func (s *Server) kubectlCacheDir() string { return filepath.Join(s.RootDir, "kubectl-cache") }

// Run runs kubectl and returns stdout, failing the test with stderr if it fails.
func (k *Kubectl) Run(t testing.TB, args ...string) string {
	t.Helper()
	return k.RunStdin(t, "", args...)
}

// RunErr runs kubectl and returns stdout, stderr and the error (an
// *exec.ExitError for a non-zero exit).
func (k *Kubectl) RunErr(t testing.TB, args ...string) (string, string, error) {
	t.Helper()
	return k.RunStdinErr(t, "", args...)
}

// RunStdin is Run with stdin (for `apply -f -` and friends).
func (k *Kubectl) RunStdin(t testing.TB, stdin string, args ...string) string {
	t.Helper()
	out, errOut, err := k.RunStdinErr(t, stdin, args...)
	if err != nil {
		t.Fatalf("kubectl %s failed: %v\nstderr:\n%s\nstdout:\n%s%s", k.describe(args), err, errOut, out, stdinNote(stdin))
	}
	return out
}

// RunStdinErr is RunErr with stdin.
func (k *Kubectl) RunStdinErr(t testing.TB, stdin string, args ...string) (string, string, error) {
	t.Helper()
	timeout := k.Timeout
	if timeout == 0 {
		timeout = DefaultKubectlTimeout
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := k.command(ctx, args)
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	start := time.Now()
	err := cmd.Run()
	if ctx.Err() != nil {
		err = fmt.Errorf("kubectl timed out after %s: %w", timeout, err)
	}
	t.Logf("kubectl %s (%s, err=%v)", k.describe(args), time.Since(start).Round(time.Millisecond), err)
	return stdout.String(), stderr.String(), err
}

func (k *Kubectl) command(ctx context.Context, args []string) *exec.Cmd {
	var full []string
	if !k.KubeconfigEnv {
		full = append(full, "--kubeconfig", k.Kubeconfig)
	}
	full = append(full, k.GlobalArgs...)
	full = append(full, args...)
	cmd := exec.CommandContext(ctx, KubectlBinary(), full...)
	env := os.Environ()
	if k.KubeconfigEnv {
		env = append(env, "KUBECONFIG="+k.Kubeconfig)
	} else {
		env = append(env, "KUBECONFIG=")
	}
	if len(k.PathPrepend) > 0 {
		// the last value of a duplicated variable wins (os/exec)
		env = append(env, "PATH="+strings.Join(append(append([]string{}, k.PathPrepend...), os.Getenv("PATH")), string(os.PathListSeparator)))
	}
	if k.CacheDir != "" {
		env = append(env, "KUBECACHEDIR="+k.CacheDir)
	}
	cmd.Env = env
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

// describe renders the command for messages, showing the interesting global
// flags (--context/--server) but not the kubeconfig path.
func (k *Kubectl) describe(args []string) string {
	parts := append(append([]string{}, k.GlobalArgs...), args...)
	for i, p := range parts {
		if p == "" || strings.ContainsAny(p, " \t\n\"'{}[]*") {
			parts[i] = fmt.Sprintf("%q", p)
		}
	}
	return strings.Join(parts, " ")
}

func stdinNote(stdin string) string {
	if stdin == "" {
		return ""
	}
	return "\nstdin:\n" + stdin
}

// Background is a kubectl process running in the background (e.g. `get -w`).
type Background struct {
	desc   string
	cancel context.CancelFunc
	done   chan struct{}
	stdout process.Buffer
	stderr process.Buffer
	err    error
}

// Background starts kubectl in the background; it is killed after timeout,
// by Stop, or when the test ends.
func (k *Kubectl) Background(t testing.TB, timeout time.Duration, args ...string) *Background {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	b := &Background{desc: k.describe(args), cancel: cancel, done: make(chan struct{})}
	cmd := k.command(ctx, args)
	cmd.Stdout = &b.stdout
	cmd.Stderr = &b.stderr
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("starting kubectl %s: %v", b.desc, err)
	}
	t.Logf("kubectl %s (background, pid %d)", b.desc, cmd.Process.Pid)
	go func() {
		b.err = cmd.Wait()
		close(b.done)
	}()
	t.Cleanup(b.Stop)
	return b
}

// Stdout returns what the process printed so far.
func (b *Background) Stdout() string { return b.stdout.String() }

// Stderr returns what the process printed to stderr so far.
func (b *Background) Stderr() string { return b.stderr.String() }

// Stop kills the process (if still running) and waits for it.
func (b *Background) Stop() {
	b.cancel()
	<-b.done
}

// WaitFor waits until cond holds for the stdout printed so far, failing the
// test with the output if it does not within timeout or if kubectl exits.
func (b *Background) WaitFor(t testing.TB, timeout time.Duration, what string, cond func(stdout string) bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		if cond(b.Stdout()) {
			return
		}
		select {
		case <-b.done:
			if cond(b.Stdout()) {
				return
			}
			t.Fatalf("kubectl %s exited (%v) before %s\nstdout:\n%s\nstderr:\n%s", b.desc, b.err, what, b.Stdout(), b.Stderr())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("kubectl %s: %s did not happen within %s\nstdout:\n%s\nstderr:\n%s", b.desc, what, timeout, b.Stdout(), b.Stderr())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// ExitCode returns the exit code of a failed kubectl run (-1 if the error is
// not an exit error, 0 for nil).
func ExitCode(err error) int {
	if err == nil {
		return 0
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	return -1
}

// WaitForCRD waits for the CRD to be Established (with kubectl wait), for its
// resource to be served and for its schema to be published (kubectl explain).
func (k *Kubectl) WaitForCRD(t testing.TB, crd, resource, ns string) {
	t.Helper()
	// kubectl wait errors out ("accessor error: <nil> is of the type <nil>")
	// if it reads the CRD while status.conditions is still null, a race that
	// kube-apiserver has too: retry in that case only.
	Eventually(t, 90*time.Second, 500*time.Millisecond, "kubectl wait --for condition=Established crd/"+crd, func() (bool, string) {
		out, stderr, err := k.RunErr(t, "wait", "--for", "condition=Established", "--timeout=60s", "crd/"+crd)
		if err == nil {
			RequireContains(t, out, "condition met", "kubectl wait --for condition=Established")
			return true, ""
		}
		if !strings.Contains(stderr, "accessor error") {
			t.Fatalf("kubectl wait --for condition=Established crd/%s failed: %v\nstderr:\n%s\nstdout:\n%s", crd, err, stderr, out)
		}
		return false, stderr
	})
	Eventually(t, 30*time.Second, 500*time.Millisecond, resource+" to be served", func() (bool, string) {
		_, stderr, err := k.RunErr(t, "get", resource, "-n", ns)
		return err == nil, stderr
	})
	Eventually(t, 30*time.Second, 500*time.Millisecond, "the schema of "+resource+" to be published (kubectl explain)", func() (bool, string) {
		out, stderr, err := k.RunErr(t, "explain", resource+".spec")
		return err == nil, stderr + out
	})
}
