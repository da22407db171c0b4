package workspace

import (
	"bytes"
	"context"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	corev1alpha1 "github.com/kcp-dev/sdk/apis/core/v1alpha1"
)

const ready = corev1alpha1.LogicalClusterPhaseReady

// harness is a fake server plus a kubeconfig pointing at its root workspace.
type harness struct {
	t          *testing.T
	fake       *fakeServer
	kubeconfig string
	sleeps     []time.Duration
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	f := newFakeServer(t)
	h := &harness{t: t, fake: f, kubeconfig: filepath.Join(t.TempDir(), "kubeconfig")}
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: f.srv.Certificate().Raw})
	cfg := &clientcmdapi.Config{
		CurrentContext: "admin",
		Clusters: map[string]*clientcmdapi.Cluster{
			"meshplane": {Server: f.srv.URL + "/clusters/root", CertificateAuthorityData: ca},
		},
		AuthInfos: map[string]*clientcmdapi.AuthInfo{"admin": {Token: f.token}},
		Contexts: map[string]*clientcmdapi.Context{
			"admin": {Cluster: "meshplane", AuthInfo: "admin"},
		},
	}
	if err := clientcmd.WriteToFile(*cfg, h.kubeconfig); err != nil {
		t.Fatal(err)
	}
	// never touch the real kubeconfig of whoever runs the tests
	t.Setenv("KUBECONFIG", h.kubeconfig)
	return h
}

// run executes "kubectl ws <args>" against the fake.
func (h *harness) run(args ...string) (string, string, error) {
	h.t.Helper()
	o := newOptions()
	o.userHomeDir = func() (string, error) { return "/home/tester", nil }
	o.sleep = func(ctx context.Context, d time.Duration) error {
		h.sleeps = append(h.sleeps, d)
		return ctx.Err()
	}
	cmd := newCommand(o)
	var out, errOut bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SetArgs(append([]string{"--kubeconfig", h.kubeconfig}, args...))
	err := cmd.ExecuteContext(context.Background())
	return out.String(), errOut.String(), err
}

// mustRun runs and expects success with exactly the given stdout.
func (h *harness) mustRun(wantOut string, args ...string) {
	h.t.Helper()
	out, errOut, err := h.run(args...)
	if err != nil {
		h.t.Fatalf("kubectl ws %s: %v (stderr: %s)", strings.Join(args, " "), err, errOut)
	}
	if out != wantOut {
		h.t.Fatalf("kubectl ws %s:\n got: %q\nwant: %q", strings.Join(args, " "), out, wantOut)
	}
}

// mustFail runs and expects an error containing want, and an unchanged kubeconfig.
func (h *harness) mustFail(want string, args ...string) {
	h.t.Helper()
	before, _ := os.ReadFile(h.kubeconfig)
	_, _, err := h.run(args...)
	if err == nil || !strings.Contains(err.Error(), want) {
		h.t.Fatalf("kubectl ws %s: error %v, want one containing %q", strings.Join(args, " "), err, want)
	}
	after, _ := os.ReadFile(h.kubeconfig)
	if !bytes.Equal(before, after) {
		h.t.Fatalf("kubectl ws %s failed but modified the kubeconfig", strings.Join(args, " "))
	}
}

func (h *harness) config() *clientcmdapi.Config {
	h.t.Helper()
	cfg, err := clientcmd.LoadFromFile(h.kubeconfig)
	if err != nil {
		h.t.Fatal(err)
	}
	return cfg
}

// server returns the server of the given context in the kubeconfig on disk.
func (h *harness) server(ctxName string) string {
	h.t.Helper()
	cfg := h.config()
	ctx, ok := cfg.Contexts[ctxName]
	if !ok {
		h.t.Fatalf("context %q not in kubeconfig", ctxName)
	}
	cl, ok := cfg.Clusters[ctx.Cluster]
	if !ok {
		h.t.Fatalf("cluster %q not in kubeconfig", ctx.Cluster)
	}
	return cl.Server
}

func (h *harness) url(p string) string { return h.fake.srv.URL + "/clusters/" + p }

func TestNavigate(t *testing.T) {
	h := newHarness(t)
	h.fake.addWorkspace("root:org", "root:organization", ready)
	h.fake.addWorkspace("root:org:team", "root:universal", ready)

	h.mustRun("Current workspace is \"root\".\n", ".")
	h.mustRun("root\n", "current", "--short")

	// relative child
	h.mustRun("Current workspace is \"root:org\" (type root:organization).\n", "org")
	cfg := h.config()
	if cfg.CurrentContext != currentContextKey {
		t.Fatalf("current-context = %q", cfg.CurrentContext)
	}
	cur := cfg.Contexts[currentContextKey]
	if cur.AuthInfo != "admin" || cur.Cluster != currentContextKey {
		t.Fatalf("current context = %+v", cur)
	}
	cl := cfg.Clusters[currentContextKey]
	if cl.Server != h.url("root:org") || len(cl.CertificateAuthorityData) == 0 {
		t.Fatalf("current cluster = %+v", cl)
	}
	if h.server(previousContextKey) != h.url("root") {
		t.Fatalf("previous = %q", h.server(previousContextKey))
	}
	if h.server("admin") != h.url("root") {
		t.Fatalf("original context modified")
	}

	// use / cd aliases, nested relative
	h.mustRun("Current workspace is \"root:org:team\" (type root:universal).\n", "cd", "team")
	h.mustRun("Current workspace is \"root:org:team\".\n", "current")
	h.mustRun("root:org:team\n", ".", "--short")

	// parent
	h.mustRun("Current workspace is \"root:org\" (type root:organization).\n", "use", "..")
	// previous, back and forth
	h.mustRun("Current workspace is \"root:org:team\".\n", "-")
	h.mustRun("Current workspace is \"root:org\".\n", "-")
	h.mustRun("Current workspace is \"root:org:team\".\n", "-")

	// grand parent and root
	h.mustRun("Current workspace is \"root\" (type root).\n", "..:..")
	h.mustFail("cannot go up from the root workspace", "..")

	// absolute, in all spellings
	h.mustRun("Current workspace is \"root:org:team\" (type root:universal).\n", ":root:org:team")
	h.mustRun("Current workspace is \"root:org\" (type root:organization).\n", "root:org")
	h.mustRun("Current workspace is \"root:org:team\" (type root:universal).\n", "use", ":root/org/team")
	h.mustRun("Current workspace is \"root\" (type root).\n", ":")
	h.mustRun("root:org:team\n", "-", "--short")
	if h.server(currentContextKey) != h.url("root:org:team") || h.server(previousContextKey) != h.url("root") {
		t.Fatalf("current %q previous %q", h.server(currentContextKey), h.server(previousContextKey))
	}
}

func TestEnterErrors(t *testing.T) {
	h := newHarness(t)
	h.fake.addWorkspace("root:org", "root:organization", ready)
	h.fake.addWorkspace("root:secret", "root:organization", ready)
	h.fake.addWorkspace("root:pending", "root:universal", corev1alpha1.LogicalClusterPhaseInitializing)
	h.fake.forbidden["root:secret"] = true
	h.fake.forbidden["root:hidden"] = true

	h.mustFail(`workspace "root:nope" not found`, "nope")
	h.mustFail(`workspace "root:org:nope" not found`, ":root:org:nope")
	h.mustFail(`access to workspace "root:secret" denied`, "secret")
	h.mustFail(`access to workspace "root:secret" denied`, ":root:secret")
	h.mustFail(`workspace "root:hidden" not found`, "hidden") // 403 inside, 404 in the parent
	h.mustFail(`workspace "root:pending" is not ready yet (phase Initializing)`, "pending")
	h.mustFail(`no previous workspace found in kubeconfig`, "-")
	h.mustFail(`invalid workspace path`, "a::b")

	// nothing happened: still in root, from the original context
	if cfg := h.config(); cfg.CurrentContext != "admin" {
		t.Fatalf("current-context = %q", cfg.CurrentContext)
	}
}

func TestNotAWorkspaceURL(t *testing.T) {
	h := newHarness(t)
	cfg := h.config()
	cfg.Clusters["meshplane"].Server = h.fake.srv.URL
	if err := clientcmd.WriteToFile(*cfg, h.kubeconfig); err != nil {
		t.Fatal(err)
	}
	h.mustRun("Current workspace is the URL \""+h.fake.srv.URL+"\".\n", ".")
	h.mustRun("", "current", "--short")
	h.mustFail("does not point to a workspace", "org")
	h.mustFail("does not point to a workspace", "create", "x")
}

func TestHome(t *testing.T) {
	h := newHarness(t)
	h.fake.home = "user:alice"
	h.fake.clusters["user:alice"] = true
	h.fake.clusters["user:alice:sub"] = true
	h.fake.home429 = 1

	h.mustRun("Current workspace is \"user:alice\" (type root:home).\n")
	if len(h.sleeps) != 1 || h.sleeps[0] != time.Second {
		t.Fatalf("sleeps = %v, want one of 1s (Retry-After)", h.sleeps)
	}
	h.mustRun("Current workspace is \"root\" (type root).\n", ":root")
	h.mustRun("Current workspace is \"user:alice\" (type root:home).\n", "~")
	h.mustRun("Current workspace is \"user:alice:sub\".\n", "use", "~/sub")
	// the shell expanded "~"
	h.mustRun("Current workspace is \"user:alice\" (type root:home).\n", "/home/tester")
	if h.server(currentContextKey) != h.url("user:alice") {
		t.Fatalf("current = %q", h.server(currentContextKey))
	}
	// from the home workspace, .. stays in the user hierarchy
	h.fake.clusters["user"] = true
	h.mustRun("Current workspace is \"user\".\n", "..")
}

func TestHomeGivesUp(t *testing.T) {
	h := newHarness(t)
	h.fake.home = "user:alice"
	h.fake.home429 = -1
	h.fake.homeRetryAfter = 7
	h.mustFail("home workspace is still not ready after 30s", "~")
	var total time.Duration
	for _, d := range h.sleeps {
		total += d
	}
	// 7s as asked by the server, the last wait cut to what remains of 30s
	want := []time.Duration{7 * time.Second, 7 * time.Second, 7 * time.Second, 7 * time.Second, 2 * time.Second}
	if total != 30*time.Second || len(h.sleeps) != len(want) || h.sleeps[4] != want[4] {
		t.Fatalf("sleeps %v (total %v), want %v", h.sleeps, total, want)
	}
}

func TestCreate(t *testing.T) {
	h := newHarness(t)
	h.fake.readyAfterGets = 3

	h.mustRun("Workspace \"team\" (type root:universal) created. Waiting for it to be ready...\n"+
		"Workspace \"team\" (type root:universal) is ready to use.\n"+
		"Current workspace is \"root:team\" (type root:universal).\n",
		"create", "team", "--type", "root:universal", "--enter")
	if len(h.sleeps) != 2 {
		t.Fatalf("polled with %d sleeps, want 2", len(h.sleeps))
	}
	if got := h.fake.created[0].Spec.Type; got == nil || got.Path != "root" || got.Name != "universal" {
		t.Fatalf("created with type %+v", got)
	}
	if h.server(currentContextKey) != h.url("root:team") || h.server(previousContextKey) != h.url("root") {
		t.Fatalf("current %q previous %q", h.server(currentContextKey), h.server(previousContextKey))
	}

	// inside root:team: a type name without path; no --enter
	h.fake.readyAfterGets = 0
	h.mustRun("Workspace \"sub\" (type root:universal) is ready to use.\n", "create", "sub", "--type", "universal")
	if got := h.fake.created[1].Spec.Type; got == nil || got.Path != "" || got.Name != "universal" {
		t.Fatalf("created with type %+v", got)
	}
	if h.server(currentContextKey) != h.url("root:team") {
		t.Fatalf("create without --enter switched to %q", h.server(currentContextKey))
	}
	// no type at all
	h.mustRun("Workspace \"plain\" (type root:universal) is ready to use.\n", "create", "plain")
	if h.fake.created[2].Spec.Type != nil {
		t.Fatalf("created with type %+v, want none", h.fake.created[2].Spec.Type)
	}

	// existing
	h.mustFail(`"sub" already exists`, "create", "sub")
	h.mustRun("Workspace \"sub\" (type root:universal) already exists.\n"+
		"Workspace \"sub\" (type root:universal) is ready to use.\n",
		"create", "sub", "--ignore-existing", "--type", "universal")
	h.mustFail(`workspace "sub" cannot be created with type root:organization, it already exists with different type root:universal`,
		"create", "sub", "--ignore-existing", "--type", "root:organization")
	h.mustRun("Workspace \"sub\" (type root:universal) already exists.\n"+
		"Workspace \"sub\" (type root:universal) is ready to use.\n"+
		"Current workspace is \"root:team:sub\" (type root:universal).\n",
		"create", "sub", "--ignore-existing", "--enter")

	// a type the server does not allow: its message is passed through
	h.fake.deniedTypes["secret"] = true
	h.mustFail("unable to use workspace type root:secret: no permission to use it here", "create", "x", "--type", "root:secret")
}

func TestCreateNotReady(t *testing.T) {
	h := newHarness(t)
	h.fake.readyAfterGets = 1000
	h.mustFail(`Workspace "slow" (type root:universal): not ready after 2s (phase Initializing)`, "create", "slow", "--ready-wait-timeout", "2s")
	h.mustFail(`Workspace "slower" (type root:universal) created but is not ready to use`, "create", "slower", "--ready-wait-timeout", "0")
}

func TestTree(t *testing.T) {
	h := newHarness(t)
	h.fake.addWorkspace("root:b", "root:organization", ready)
	h.fake.addWorkspace("root:a", "root:organization", ready)
	h.fake.addWorkspace("root:a:y", "root:universal", ready)
	h.fake.addWorkspace("root:a:x", "root:universal", ready)
	h.fake.addWorkspace("root:a:x:deep", "root:universal", ready)
	h.fake.addWorkspace("root:c", "root:organization", ready)

	h.mustRun(`.
└── root
    ├── a
    │   ├── x
    │   │   └── deep
    │   └── y
    ├── b
    └── c
`, "tree")

	h.mustRun("Current workspace is \"root:a\" (type root:organization).\n", "a")
	h.mustRun(`.
└── root:a
    ├── root:a:x
    │   └── root:a:x:deep
    └── root:a:y
`, "tree", "--full")
}

func TestCreateContext(t *testing.T) {
	h := newHarness(t)
	h.fake.addWorkspace("root:a", "root:organization", ready)
	h.mustRun("Current workspace is \"root:a\" (type root:organization).\n", "a")
	h.mustRun("Created context \"root:a\" and switched to it.\n", "create-context")
	if h.server("root:a") != h.url("root:a") || h.config().CurrentContext != "root:a" {
		t.Fatalf("context root:a -> %q, current %q", h.server("root:a"), h.config().CurrentContext)
	}
	h.mustFail(`context "root:a" already exists`, "create-context")
	h.mustRun("Updated context \"root:a\".\n", "create-context", "--overwrite")
	h.mustRun("Created context \"mine\" and switched to it.\n", "create-context", "mine")
}

func TestStandardFlags(t *testing.T) {
	h := newHarness(t)
	h.fake.addWorkspace("root:a", "root:organization", ready)

	// --server overrides the kubeconfig for the request
	h.mustRun("root:a\n", "--server", h.url("root:a"), ".", "--short")

	// KUBECONFIG is honoured without --kubeconfig
	o := newOptions()
	cmd := newCommand(o)
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs([]string{"a"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err, out.String())
	}
	if h.server(currentContextKey) != h.url("root:a") {
		t.Fatalf("KUBECONFIG not used: %q", h.server(currentContextKey))
	}

	// --context picks the context to start from
	cfg := h.config()
	cfg.Contexts["other"] = &clientcmdapi.Context{Cluster: "meshplane", AuthInfo: "admin", Namespace: "other-ns"}
	if err := clientcmd.WriteToFile(*cfg, h.kubeconfig); err != nil {
		t.Fatal(err)
	}
	h.mustRun("Current workspace is \"root:a\" (type root:organization).\n", "--context", "other", ":root:a")
	cfg = h.config()
	if cfg.Contexts[currentContextKey].Namespace != "other-ns" || cfg.Contexts[previousContextKey].Namespace != "other-ns" {
		t.Fatalf("current %+v previous %+v", cfg.Contexts[currentContextKey], cfg.Contexts[previousContextKey])
	}

	// too many arguments
	if _, _, err := h.run("a", "b"); err == nil {
		t.Fatal("expected error for two arguments")
	}
}
