// Package e2e tests the account-operator as a user meets it: a real core
// (started by the sdk test kit) bootstrapped as `make run` does, the real
// account-operator binary, and the real kubectl acting as the demo users.
package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/meshplane/meshplane/platform/bootstrap"
	"github.com/meshplane/meshplane/platform/launcher"
	"github.com/meshplane/meshplane/sdk/process"
	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// TestMain starts one core for the package (or connects to the external
// one), runs the tests, then stops the account-operator before the core:
// a core asked to stop while the operator still watches it waits for those
// requests (see the report of the accounts branch).
func TestMain(m *testing.M) {
	var err error
	if framework.ExternalMode() {
		srv, err = framework.ExternalFromEnv()
	} else {
		srv, err = framework.Start()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting meshplane:", err)
		os.Exit(1)
	}
	code := m.Run()
	op.mu.Lock()
	if op.proc != nil {
		if err := op.proc.Stop(30 * time.Second); err != nil {
			fmt.Fprintln(os.Stderr, "stopping the account-operator:", err)
		}
	}
	sec.stop()
	if sec.dir != "" && code == 0 {
		os.RemoveAll(sec.dir)
	}
	if op.dir != "" && code == 0 {
		os.RemoveAll(op.dir)
	}
	op.mu.Unlock()
	if code != 0 && !srv.External {
		fmt.Fprintf(os.Stderr, "meshplane log (%s), last lines:\n%s\n", srv.LogPath, srv.LogTail(0, 200))
	}
	if err := srv.Cleanup(code != 0); err != nil {
		fmt.Fprintln(os.Stderr, "stopping meshplane:", err)
		if code == 0 {
			code = 1
		}
	}
	framework.CleanupBinaries()
	os.Exit(code)
}

// srv is the package's core.
var srv *framework.Server

// operator is the account-operator process the tests share.
type operator struct {
	mu      sync.Mutex
	started bool
	err     error
	dir     string
	log     string
	args    []string
	health  string
	// kubeconfig is the operator's scoped credential.
	kubeconfig string
	proc       *process.Process
}

var op operator

// platform returns the shared core, bootstrapped, with the account-operator
// running (started on first use). Against an external platform (make run,
// MESHPLANE_PLATFORM_ENV) the platform's own operator is used.
func platform(t *testing.T) *framework.Server {
	t.Helper()
	s := srv
	if !s.Running() {
		t.Fatalf("meshplane (pid %d) is not running any more; log tail:\n%s", s.PID, s.LogTail(0, 100))
	}
	s.DumpLogsOnFailure(t)
	if s.External {
		return s
	}
	op.mu.Lock()
	defer op.mu.Unlock()
	if !op.started {
		op.started = true
		op.err = op.setup(t, s)
	}
	if op.err != nil {
		t.Fatalf("setting up the platform: %v", op.err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("account-operator log (%s), last lines:\n%s", op.log, tail(op.log, 80))
			t.Logf("security-operator log (%s), last lines:\n%s", sec.log, tail(sec.log, 80))
		}
	})
	return s
}

func (o *operator) setup(t *testing.T, s *framework.Server) error {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	base := s.KCPAdminRESTConfig(t, "")
	if err := bootstrap.Run(ctx, base); err != nil {
		return fmt.Errorf("bootstrap: %w", err)
	}
	// The platform lets founders and members read their organization in
	// root:orgs through the rebac-authz-webhook, which this suite does not
	// run: its users read root:orgs through RBAC instead.
	if _, errOut, err := s.KubectlFor("root:orgs").RunStdinErr(t, orgsReaders, "apply", "-f", "-"); err != nil {
		return fmt.Errorf("root:orgs readers: %v: %s", err, errOut)
	}
	// Organizations and accounts wait for the security initializer.
	if err := sec.setup(ctx, s); err != nil {
		return fmt.Errorf("security-operator: %w", err)
	}
	bin, err := framework.Binary("account-operator", "operators", "./cmd/account-operator")
	if err != nil {
		return err
	}
	ports, err := process.FreePorts(2)
	if err != nil {
		return err
	}
	if o.dir, err = os.MkdirTemp("", "account-operator-e2e-"); err != nil {
		return err
	}
	o.log = filepath.Join(o.dir, "account-operator.log")
	o.health = fmt.Sprintf("127.0.0.1:%d", ports[1])
	// The operator's scoped credential, made as `make run` makes it; the
	// admin kubeconfig never reaches the operator.
	o.kubeconfig = filepath.Join(o.dir, "account-operator.kubeconfig")
	if _, err := launcher.OperatorCredential(ctx, s.Kubeconfig, o.kubeconfig, launcher.DefaultOperatorTokenTTL); err != nil {
		return fmt.Errorf("the operator's credential: %w", err)
	}
	o.args = []string{bin,
		"--kubeconfig", o.kubeconfig,
		"--workspace", "root:platform-mesh-system",
		"--metrics-bind-address", fmt.Sprintf("127.0.0.1:%d", ports[0]),
		"--health-probe-bind-address", o.health,
	}
	return o.start()
}

// start runs the operator and waits for /readyz.
func (o *operator) start() error {
	f, err := os.OpenFile(o.log, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	cmd := exec.Command(o.args[0], o.args[1:]...)
	cmd.Stdout, cmd.Stderr = f, f
	p, err := process.StartProcess(cmd)
	if err != nil {
		return err
	}
	o.proc = p
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := process.WaitReady(ctx, "http://"+o.health+"/readyz", 200*time.Millisecond, p.Exited()); err != nil {
		return fmt.Errorf("account-operator: %w\n%s", err, tail(o.log, 40))
	}
	return nil
}

// kill9 kills the operator with SIGKILL, by PID, and waits for it to go.
func (o *operator) kill9(t *testing.T) {
	t.Helper()
	o.mu.Lock()
	defer o.mu.Unlock()
	pid := o.proc.PID()
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatalf("kill -9 %d: %v", pid, err)
	}
	select {
	case <-o.proc.Exited():
	case <-time.After(30 * time.Second):
		t.Fatalf("account-operator (pid %d) still running 30s after SIGKILL", pid)
	}
	t.Logf("killed the account-operator (pid %d) with SIGKILL", pid)
}

func (o *operator) restart(t *testing.T) {
	t.Helper()
	o.mu.Lock()
	defer o.mu.Unlock()
	if err := o.start(); err != nil {
		t.Fatal(err)
	}
	t.Logf("restarted the account-operator (pid %d)", o.proc.PID())
}

func tail(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := splitLines(string(data))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	out := ""
	for _, l := range lines {
		out += l + "\n"
	}
	return out
}

func splitLines(s string) []string {
	var lines []string
	start := 0
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			lines = append(lines, s[start:i])
			start = i + 1
		}
	}
	if start < len(s) {
		lines = append(lines, s[start:])
	}
	return lines
}

const orgsReaders = `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: e2e:orgs:reader
rules:
- apiGroups: ["core.platform-mesh.io"]
  resources: ["accounts"]
  verbs: ["get", "list", "watch"]
- apiGroups: ["tenancy.kcp.io"]
  resources: ["workspaces"]
  verbs: ["get", "list", "watch"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: e2e:orgs:reader
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: e2e:orgs:reader}
subjects:
- {apiGroup: rbac.authorization.k8s.io, kind: Group, name: system:authenticated}
`
