package e2e

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/meshplane/meshplane/platform/launcher"
	"github.com/meshplane/meshplane/sdk/platformenv"
	"github.com/meshplane/meshplane/sdk/process"
	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// platform is a running `meshplane-platform`.
type platform struct {
	proc       *process.Process
	out        *bytes.Buffer
	env        map[string]string
	kubeconfig string
}

func startPlatform(t *testing.T, extraArgs ...string) *platform {
	t.Helper()
	root := t.TempDir()
	base := 0
	for range 50 {
		b := 21000 + rand.IntN(1500)*launcher.PortRange
		if (launcher.Ports{Base: b}).CheckFree() == nil {
			base = b
			break
		}
	}
	if base == 0 {
		t.Fatal("no free port range")
	}
	p := &platform{out: &bytes.Buffer{}}
	cmd := exec.Command(launcherBin, append([]string{"--root-directory", root, "--port-base", strconv.Itoa(base), "--bin-dir", binDir}, extraArgs...)...)
	w := &lockedWriter{b: p.out}
	cmd.Stdout, cmd.Stderr = w, w
	var err error
	if p.proc, err = process.StartProcess(cmd); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.proc.Stop(90 * time.Second); err != nil {
			t.Logf("stopping the platform: %v", err)
		}
		if t.Failed() {
			t.Logf("platform output (tail):\n%s", w.tail(12000))
		}
	})
	deadline := time.Now().Add(4 * time.Minute)
	for {
		if env, err := platformenv.Read(filepath.Join(root, platformenv.FileName)); err == nil {
			p.env = env
			break
		}
		if !p.proc.Running() || time.Now().After(deadline) {
			t.Fatalf("the platform did not get ready:\n%s", w.tail(6000))
		}
		time.Sleep(250 * time.Millisecond)
	}
	p.kubeconfig = p.env["KUBECONFIG"]
	return p
}

// component returns the pid of the platform's process running binary.
func (p *platform) component(t *testing.T, binary string) int {
	t.Helper()
	entries, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, e := range entries {
		data, err := os.ReadFile(e)
		if err != nil {
			continue
		}
		text := string(data)
		fields := strings.Fields(text[strings.LastIndexByte(text, ')')+1:])
		if len(fields) < 2 || fields[1] != strconv.Itoa(p.proc.PID()) {
			continue
		}
		pid := strings.Split(e, "/")[2]
		if exe, err := os.Readlink("/proc/" + pid + "/exe"); err == nil && filepath.Base(exe) == binary {
			n, _ := strconv.Atoi(pid)
			return n
		}
	}
	t.Fatalf("no %s process below the launcher (pid %d)", binary, p.proc.PID())
	return 0
}

// kubectl runs kubectl as context (alice, bob, base) against a workspace.
func (p *platform) kubectl(t *testing.T, context, workspace, stdin string, args ...string) (string, error) {
	t.Helper()
	full := append([]string{"--kubeconfig", p.kubeconfig, "--context", context,
		"--server", p.env["CORE_URL"] + "/clusters/" + workspace, "--request-timeout", "90s"}, args...)
	cmd := exec.Command(framework.KubectlBinary(), full...)
	cmd.Env = append(os.Environ(), "KUBECACHEDIR="+t.TempDir())
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func (p *platform) must(t *testing.T, context, workspace, stdin string, args ...string) string {
	t.Helper()
	out, err := p.kubectl(t, context, workspace, stdin, args...)
	if err != nil {
		t.Fatalf("kubectl --context %s (%s) %s: %v\n%s", context, workspace, strings.Join(args, " "), err, out)
	}
	return out
}

// eventually retries a kubectl command until it succeeds (want true) or
// fails with Forbidden (want false).
func (p *platform) eventually(t *testing.T, what string, want bool, context, workspace string, args ...string) {
	t.Helper()
	framework.Eventually(t, 60*time.Second, 500*time.Millisecond, what, func() (bool, string) {
		out, err := p.kubectl(t, context, workspace, "", args...)
		if want {
			return err == nil, out
		}
		return err != nil && strings.Contains(out, "Forbidden"), out
	})
}

func account(name, typ string) string {
	return fmt.Sprintf("apiVersion: core.platform-mesh.io/v1alpha1\nkind: Account\nmetadata:\n  name: %s\nspec:\n  type: %s\n  displayName: %s\n  creator: alice\n", name, typ, name)
}

// TestChain: alice founds acme and owns it; bob gets in through a Store
// tuple and out when it goes; with OpenFGA or the webhook stopped, bob is
// denied and alice's RBAC rights still work.
func TestChain(t *testing.T) {
	p := startPlatform(t)
	const org, team = "root:orgs:acme", "root:orgs:acme:team-a"

	p.must(t, "alice", "root:orgs", account("acme", "org"), "create", "-f", "-")
	p.must(t, "alice", "root:orgs", "", "wait", "--for=condition=Ready", "account/acme", "--timeout=120s")
	p.eventually(t, "alice to list the accounts of her organization", true, "alice", org, "get", "accounts")
	p.must(t, "alice", org, account("team-a", "account"), "create", "-f", "-")
	p.must(t, "alice", org, "", "wait", "--for=condition=Ready", "account/team-a", "--timeout=120s")
	p.eventually(t, "alice to create a namespace in team-a", true, "alice", team, "create", "namespace", "apps")
	p.must(t, "alice", team, "", "create", "configmap", "cfg", "-n", "apps", "--from-literal=k=v")
	p.must(t, "alice", team, "", "create", "configmap", "other", "-n", "apps", "--from-literal=k=v")

	// bob: nothing yet.
	out, err := p.kubectl(t, "bob", team, "", "get", "configmaps", "-n", "apps")
	framework.RequireFails(t, "", out, err, "bob listing configmaps in team-a before any grant", "Forbidden")

	// A Store tuple makes bob a member of acme, and so of team-a.
	origin := strings.TrimSpace(p.must(t, "alice", org, "", "get", "accountinfo", "account", "-o", "jsonpath={.spec.account.originClusterId}"))
	grant := fmt.Sprintf(`{"spec":{"tuples":[{"object":"core_platform-mesh_io_account:%s/acme","relation":"member","user":"user:bob"}]}}`, origin)
	revoke := `{"spec":{"tuples":[]}}`
	p.must(t, "base", "root:orgs", "", "patch", "stores", "acme", "--type=merge", "-p", grant)
	p.eventually(t, "bob to list configmaps once a member", true, "bob", team, "get", "configmaps", "-n", "apps")
	framework.RequireContains(t, p.must(t, "bob", team, "", "get", "configmap", "cfg", "-n", "apps", "-o", "jsonpath={.data.k}"), "v", "bob reading cfg")
	out, err = p.kubectl(t, "bob", team, "", "delete", "configmap", "cfg", "-n", "apps")
	framework.RequireFails(t, "", out, err, "bob (a member, not an owner) deleting cfg", "Forbidden")
	// What UIs ask: the rules list what OpenFGA grants (a
	// SelfSubjectRulesReview routed to the webhook's /rules).
	rules := p.must(t, "bob", team, "", "auth", "can-i", "--list", "-n", "apps")
	if !strings.Contains(rules, "configmaps ") || !strings.Contains(rules, "[get list watch]") {
		t.Errorf("kubectl auth can-i --list as member bob does not show read access to configmaps:\n%s", rules)
	}
	framework.RequireEqual(t, strings.TrimSpace(p.must(t, "bob", team, "", "auth", "can-i", "list", "configmaps", "-n", "apps")), "yes", "bob: can-i list configmaps")

	p.must(t, "base", "root:orgs", "", "patch", "stores", "acme", "--type=merge", "-p", revoke)
	p.eventually(t, "bob to be denied once the tuple is gone", false, "bob", team, "get", "configmaps", "-n", "apps")

	// Outages: bob is a member again; stopping OpenFGA or the webhook
	// takes that away, while alice's RBAC rights (she is her workspaces'
	// admin) keep working.
	p.must(t, "base", "root:orgs", "", "patch", "stores", "acme", "--type=merge", "-p", grant)
	p.eventually(t, "bob to be a member again", true, "bob", team, "get", "configmaps", "-n", "apps")
	for _, c := range []struct{ what, binary string }{
		{"OpenFGA stopped", "openfga"},
		{"the webhook stopped", "rebac-authz-webhook"},
	} {
		pid := p.component(t, c.binary)
		if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s (SIGSTOP to pid %d)", c.what, pid)
		p.eventually(t, "bob to be denied with "+c.what, false, "bob", team, "get", "configmaps", "-n", "apps")
		p.must(t, "alice", team, "", "get", "configmaps", "-n", "apps")
		p.must(t, "alice", team, "", "create", "configmap", "during-"+c.binary, "-n", "apps", "--from-literal=k=v")
		if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
			t.Fatal(err)
		}
		p.eventually(t, "bob to be allowed again after "+c.what, true, "bob", team, "get", "configmaps", "-n", "apps")
	}
}

type lockedWriter struct {
	mu sync.Mutex
	b  *bytes.Buffer
}

func (w *lockedWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(b)
}

func (w *lockedWriter) tail(n int) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := w.b.String()
	if len(s) > n {
		s = s[len(s)-n:]
	}
	return s
}
