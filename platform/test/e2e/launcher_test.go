package e2e

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/meshplane/meshplane/platform/launcher"
	"github.com/meshplane/meshplane/sdk/platformenv"
	"github.com/meshplane/meshplane/sdk/process"
	"github.com/meshplane/meshplane/sdk/testing/oidcissuer"
)

// platform is one running launcher process.
type platform struct {
	root string
	base int
	cmd  *exec.Cmd
	out  *process.Buffer
	done chan error
}

// freeBase finds a port base whose whole range is free.
func freeBase(t *testing.T) int {
	t.Helper()
	for range 50 {
		base := 20000 + rand.IntN(2000)*launcher.PortRange
		if (launcher.Ports{Base: base}).CheckFree() == nil {
			return base
		}
	}
	t.Fatal("no free port range found")
	return 0
}

// startPlatform runs `meshplane-platform` (with extra flags) and returns
// at once.
func startPlatform(t *testing.T, root string, base int, extra ...string) *platform {
	t.Helper()
	p := &platform{root: root, base: base, out: &process.Buffer{}, done: make(chan error, 1)}
	p.cmd = exec.Command(launcherBin, append([]string{"--root-directory", root, "--port-base", strconv.Itoa(base), "--bin-dir", binDir}, extra...)...)
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", launcherBin, err)
	}
	go func() { p.done <- p.cmd.Wait() }()
	t.Cleanup(func() {
		if p.cmd.ProcessState == nil {
			_ = p.cmd.Process.Signal(syscall.SIGINT)
			select {
			case <-p.done:
			case <-time.After(90 * time.Second):
				_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
			}
		}
		if t.Failed() {
			t.Logf("launcher output (%s):\n%s", root, tail(p.out.String(), 80))
		}
	})
	return p
}

// waitReady waits for platform.env and returns its entries.
func (p *platform) waitReady(t *testing.T) map[string]string {
	t.Helper()
	path := filepath.Join(p.root, platformenv.FileName)
	deadline := time.Now().Add(3 * time.Minute)
	for time.Now().Before(deadline) {
		select {
		case err := <-p.done:
			t.Fatalf("launcher exited before the platform was ready: %v\n%s", err, tail(p.out.String(), 40))
		default:
		}
		if env, err := platformenv.Read(path); err == nil {
			return env
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("%s not written within 3m", path)
	return nil
}

// stop sends Ctrl-C and expects a clean exit that removes platform.env.
func (p *platform) stop(t *testing.T) {
	t.Helper()
	_ = p.cmd.Process.Signal(syscall.SIGINT)
	select {
	case err := <-p.done:
		if err != nil {
			t.Fatalf("launcher exited with %v after Ctrl-C\n%s", err, tail(p.out.String(), 40))
		}
	case <-time.After(90 * time.Second):
		t.Fatal("launcher still running 90s after Ctrl-C")
	}
	if _, err := os.Stat(filepath.Join(p.root, platformenv.FileName)); !os.IsNotExist(err) {
		t.Errorf("platform.env still there after a clean stop (stat: %v)", err)
	}
}

func kubectl(t *testing.T, kubeconfig string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command("kubectl", append([]string{"--kubeconfig", kubeconfig}, args...)...)
	out, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

func mustKubectl(t *testing.T, kubeconfig string, args ...string) string {
	t.Helper()
	out, err := kubectl(t, kubeconfig, args...)
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = append([]string{fmt.Sprintf("... (%d earlier lines)", len(lines)-n)}, lines[len(lines)-n:]...)
	}
	return strings.Join(lines, "\n")
}

// startIssuer starts a real OIDC issuer (discovery and JWKS over TLS on
// loopback) for the test and writes an AuthenticationConfiguration trusting
// it into dir: usernames from "sub" prefixed "oidc:", audience meshplane.
func startIssuer(t *testing.T, dir string) (*oidcissuer.Issuer, string) {
	t.Helper()
	srv, err := oidcissuer.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	iss, err := srv.NewIssuer("corp", oidcissuer.ES256)
	if err != nil {
		t.Fatal(err)
	}
	ca := "      " + strings.ReplaceAll(strings.TrimRight(srv.CAPEM(), "\n"), "\n", "\n      ")
	config := fmt.Sprintf(`apiVersion: apiserver.config.k8s.io/v1
kind: AuthenticationConfiguration
jwt:
- issuer:
    url: %s
    audiences: [meshplane]
    certificateAuthority: |
%s
  claimMappings:
    username: {claim: sub, prefix: "oidc:"}
    groups: {claim: groups, prefix: "oidc:"}
`, iss.URL, ca)
	file := filepath.Join(dir, "authentication.yaml")
	if err := os.WriteFile(file, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	return iss, file
}

// TestLauncher runs two independent platforms side by side, refuses a third
// on a taken port range, and restarts one with its data intact.
func TestLauncher(t *testing.T) {
	tmp := t.TempDir()
	rootA, rootB := filepath.Join(tmp, "a"), filepath.Join(tmp, "b")
	baseA := freeBase(t)
	a := startPlatform(t, rootA, baseA)
	envA := a.waitReady(t)

	kubeconfig := filepath.Join(rootA, "admin.kubeconfig")
	if got := envA["KUBECONFIG"]; got != kubeconfig {
		t.Errorf("platform.env KUBECONFIG = %q, want %q", got, kubeconfig)
	}
	if got, want := envA["CORE_URL"], fmt.Sprintf("https://127.0.0.1:%d", baseA); got != want {
		t.Errorf("platform.env CORE_URL = %q, want %q", got, want)
	}
	if got, want := envA["GRAPHQL_URL"], fmt.Sprintf("http://127.0.0.1:%d", launcher.Ports{Base: baseA}.GraphQL()); got != want {
		t.Errorf("platform.env GRAPHQL_URL = %q, want %q", got, want)
	}
	if got, want := envA["OPENFGA_URL"], fmt.Sprintf("http://127.0.0.1:%d", baseA+6); got != want {
		t.Errorf("platform.env OPENFGA_URL = %q, want %q", got, want)
	}
	// The gateway serves, and wants a token.
	if resp, err := http.Post(envA["GRAPHQL_URL"]+"/api/clusters/root/graphql", "application/json", strings.NewReader(`{"query":"{ __typename }"}`)); err != nil {
		t.Errorf("the GraphQL gateway at GRAPHQL_URL does not answer: %v", err)
	} else {
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("the GraphQL gateway answered %d to a request without a token, want 401", resp.StatusCode)
		}
	}
	ports, err := listeningPorts(a.cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	if len(ports) == 0 {
		t.Fatal("found no listening port of the platform's processes")
	}
	for _, p := range ports {
		if p < baseA || p >= baseA+launcher.PortRange {
			t.Errorf("the platform listens on port %d, outside its range %d..%d (all: %v)", p, baseA, baseA+launcher.PortRange-1, ports)
		}
	}

	// The bootstrap made root:orgs, where the demo users' contexts point.
	if out := mustKubectl(t, kubeconfig, "get", "workspace", "orgs", "-o", "jsonpath={.status.phase}"); out != "Ready" {
		t.Errorf("workspace root:orgs phase %q, want Ready", out)
	}
	if out := mustKubectl(t, kubeconfig, "--context", "alice", "auth", "whoami", "-o", "jsonpath={.status.userInfo.username}"); out != "alice" {
		t.Errorf("alice's context authenticates as %q", out)
	}
	// No tenant lists the organizations (docs/authorization.md).
	if out, err := kubectl(t, kubeconfig, "--context", "bob", "get", "workspaces"); err == nil || !strings.Contains(out, "Forbidden") {
		t.Errorf("bob listed the workspaces of root:orgs (err %v): %s", err, out)
	}
	if out, err := kubectl(t, kubeconfig, "--context", "bob", "create", "namespace", "nope"); err == nil || !strings.Contains(out, "Forbidden") {
		t.Errorf("bob created a namespace in root:orgs (err %v): %s", err, out)
	}
	mustKubectl(t, kubeconfig, "create", "namespace", "kept")

	// root:orgs is bound to core.platform-mesh.io: any user founds an org.
	if out := mustKubectl(t, kubeconfig, "--context", "root", "--server", envA["CORE_URL"]+"/clusters/root:orgs",
		"get", "apibinding", "core.platform-mesh.io", "-o", "jsonpath={.status.phase}"); out != "Bound" {
		t.Errorf("root:orgs binding to core.platform-mesh.io is %q, want Bound", out)
	}
	mustKubectl(t, kubeconfig, "--context", "alice", "create", "-f", filepath.Join("testdata", "org-account.yaml"))
	// The account-operator, part of the platform, gives it its workspace.
	waitAccountReady(t, kubeconfig, "acme")
	acmeInfo := eventuallyKubectl(t, kubeconfig, "--context", "alice", "--server", envA["CORE_URL"]+"/clusters/root:orgs:acme",
		"get", "accountinfo", "account", "-o", "jsonpath={.metadata.uid}/{.spec.organization.name}")
	// The security-operator gave the org a Store, an OpenFGA store in the
	// platform's OpenFGA.
	storeID := eventuallyKubectl(t, kubeconfig, "--context", "root", "--server", envA["CORE_URL"]+"/clusters/root:orgs",
		"get", "store", "acme", "-o", "jsonpath={.status.storeId}")
	requireOpenFGAStore(t, envA, storeID)
	// ... with its model and tuples written (the operator's scoped
	// credential and the lifecycle one reach all they need).
	mustKubectl(t, kubeconfig, "--context", "root", "--server", envA["CORE_URL"]+"/clusters/root:orgs",
		"wait", "--for=condition=Ready", "store/acme", "--timeout=90s")
	if out, err := kubectl(t, kubeconfig, "--context", "bob", "delete", "account", "acme"); err == nil || !strings.Contains(out, "Forbidden") {
		t.Errorf("bob deleted alice's org account (err %v): %s", err, out)
	}
	// The bootstrap is idempotent: a restart rewrites nothing.
	bootstrapped := bootstrapVersions(t, kubeconfig, envA["CORE_URL"])

	// A second copy beside the first shares nothing with it. It trusts
	// an OIDC issuer (--authentication-config, make run's
	// AUTHENTICATION_CONFIG): the issuer's users reach its core.
	issuer, authConfig := startIssuer(t, tmp)
	baseB := freeBase(t)
	b := startPlatform(t, rootB, baseB, "--authentication-config", authConfig)
	envB := b.waitReady(t)
	if out, err := kubectl(t, envB["KUBECONFIG"], "get", "namespace", "kept"); err == nil || !strings.Contains(out, "NotFound") {
		t.Errorf("the second platform sees the first one's namespace (err %v): %s", err, out)
	}
	jwt := issuer.Token(oidcissuer.Claims{"sub": "dana", "aud": "meshplane", "groups": []string{"ops"}}, time.Hour)
	if out := mustKubectl(t, envB["KUBECONFIG"], "--context", "root", "--token", jwt, "auth", "whoami", "-o", "jsonpath={.status.userInfo.username}"); out != "oidc:dana" {
		t.Errorf("an OIDC user of --authentication-config authenticates as %q, want oidc:dana", out)
	}
	if out, err := kubectl(t, kubeconfig, "--context", "root", "--token", jwt, "auth", "whoami"); err == nil || !strings.Contains(out, "You must be logged in") {
		t.Errorf("the first platform (no --authentication-config) accepted the OIDC token (err %v): %s", err, out)
	}

	// A third on the first one's ports fails at once, saying why.
	c := startPlatform(t, filepath.Join(tmp, "c"), baseA)
	select {
	case err := <-c.done:
		if err == nil || !strings.Contains(c.out.String(), "in use") {
			t.Errorf("a platform on a taken port range: exit %v, output:\n%s", err, c.out.String())
		}
	case <-time.After(time.Minute):
		t.Fatal("a platform on a taken port range is still running after 1m")
	}

	b.stop(t)
	a.stop(t)

	// Restarted, the first keeps its data and its demo users.
	a = startPlatform(t, rootA, baseA)
	a.waitReady(t)
	mustKubectl(t, kubeconfig, "get", "namespace", "kept")
	mustKubectl(t, kubeconfig, "--context", "alice", "get", "account", "acme")
	// ... its OpenFGA store (persistent under the root directory) ...
	requireOpenFGAStore(t, envA, storeID)
	// ... and every account: the same Ready organization, workspace and
	// AccountInfo (not a new one), nothing duplicated.
	waitAccountReady(t, kubeconfig, "acme")
	if got := eventuallyKubectl(t, kubeconfig, "--context", "alice", "--server", envA["CORE_URL"]+"/clusters/root:orgs:acme",
		"get", "accountinfo", "account", "-o", "jsonpath={.metadata.uid}/{.spec.organization.name}"); got != acmeInfo {
		t.Errorf("after a restart acme's AccountInfo is %q, was %q", got, acmeInfo)
	}
	if ws := mustKubectl(t, kubeconfig, "--context", "root", "--server", envA["CORE_URL"]+"/clusters/root:orgs", "get", "workspaces", "-o", "name"); strings.Count(ws, "acme") != 1 {
		t.Errorf("after a restart root:orgs holds %q", ws)
	}
	if after := bootstrapVersions(t, kubeconfig, envA["CORE_URL"]); after != bootstrapped {
		t.Errorf("a restart rewrote bootstrapped objects: versions %s before, %s after", bootstrapped, after)
	}
	if out := mustKubectl(t, kubeconfig, "--context", "alice", "auth", "whoami", "-o", "jsonpath={.status.userInfo.username}"); out != "alice" {
		t.Errorf("after a restart alice's context authenticates as %q", out)
	}
	a.stop(t)
}

// bootstrapVersions lists what changes when the bootstrap writes its
// objects, in a fixed order.
func bootstrapVersions(t *testing.T, kubeconfig, coreURL string) string {
	t.Helper()
	// Controllers write the status of these objects (a restart may touch
	// it); what the bootstrap owns is the spec (generation) and its own
	// managed-fields entry, whose time moves on every write it makes.
	owned := `-o=jsonpath={.metadata.generation}/{.metadata.managedFields[?(@.manager=="meshplane-bootstrap")].time}`
	rv := "-o=jsonpath={.metadata.resourceVersion}"
	in := func(path string) string { return "--server=" + coreURL + "/clusters/" + path }
	versions := []string{
		mustKubectl(t, kubeconfig, "get", "workspacetype", "orgs", owned),
		mustKubectl(t, kubeconfig, "get", "workspace", "orgs", owned),
		mustKubectl(t, kubeconfig, in("root:platform-mesh-system"), "get", "apiexport", "core.platform-mesh.io", owned),
		mustKubectl(t, kubeconfig, in("root:orgs"), "get", "apibinding", "core.platform-mesh.io", owned),
	}
	for _, v := range versions {
		if strings.HasSuffix(v, "/") {
			t.Errorf("a bootstrapped object has no meshplane-bootstrap managed fields (generation/time %q)", v)
		}
	}
	versions = append(versions, mustKubectl(t, kubeconfig, in("root:orgs"), "get", "clusterrolebinding", "meshplane:orgs:member", rv))
	return strings.Join(versions, ",")
}

// waitAccountReady waits for an Account in root:orgs (or where args, e.g.
// --server, say) to be Ready: its condition Ready, not one ending in it
// (WorkspaceTypeReady is True at once for an account of type account).
func waitAccountReady(t *testing.T, kubeconfig, name string, args ...string) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		out, err := kubectl(t, kubeconfig, append([]string{"--context", "alice", "get", "account", name, "-o",
			`jsonpath={range .status.conditions[*]}{.type}={.status} ({.message}); {end}`}, args...)...)
		if err == nil && (strings.HasPrefix(out, "Ready=True") || strings.Contains(out, "; Ready=True")) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("Account %s not Ready after 2m: %v %s", name, err, out)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// eventuallyKubectl retries a kubectl command for up to 30s: rights granted
// a moment ago (alice made admin of her organization's workspace) reach
// the core's authorizer shortly after they are written.
func eventuallyKubectl(t *testing.T, kubeconfig string, args ...string) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		out, err := kubectl(t, kubeconfig, args...)
		if err == nil {
			return out
		}
		if time.Now().After(deadline) {
			t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// requireOpenFGAStore fails unless the platform's OpenFGA (asked with its
// preshared key) has the store id.
func requireOpenFGAStore(t *testing.T, env map[string]string, id string) {
	t.Helper()
	if id == "" {
		t.Fatal("the Store has no store id")
	}
	url := env["OPENFGA_URL"]
	req, err := http.NewRequest(http.MethodGet, url+"/stores/"+id, nil)
	if err != nil {
		t.Fatal(err)
	}
	key, err := os.ReadFile(env["OPENFGA_PRESHARED_KEY_FILE"])
	if err != nil {
		t.Fatalf("OpenFGA's key: %v", err)
	}
	req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(key)))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("OpenFGA at %s: %v", url, err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("OpenFGA store %s: %s, want 200", id, resp.Status)
	}
}
