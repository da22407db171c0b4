package e2e

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	apisv1alpha1 "github.com/kcp-dev/sdk/apis/apis/v1alpha1"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmanager "sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	mcbuilder "sigs.k8s.io/multicluster-runtime/pkg/builder"
	"sigs.k8s.io/multicluster-runtime/pkg/multicluster"
	mcreconcile "sigs.k8s.io/multicluster-runtime/pkg/reconcile"

	corev1alpha1 "github.com/meshplane/meshplane/apis/core/v1alpha1"
	"github.com/meshplane/meshplane/providers/manager"
	"github.com/meshplane/meshplane/sdk/testing/framework"
)

const slice = "core.platform-mesh.io"

func createAccount(t *testing.T, s *framework.Server, cluster, name string) {
	t.Helper()
	s.KubectlFor(cluster).RunStdin(t, fmt.Sprintf(`apiVersion: core.platform-mesh.io/v1alpha1
kind: Account
metadata: {name: %s}
spec: {type: org, displayName: %s}
`, name, name), "create", "-f", "-")
}

func providerKubeconfig(t *testing.T, s *framework.Server, args ...string) (string, string, error) {
	t.Helper()
	bin, err := framework.Binary("provider-kubeconfig", "providers", "./cmd/provider-kubeconfig")
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "provider.kubeconfig")
	cmd := exec.Command(bin, append([]string{"--kubeconfig", s.Kubeconfig, "--context", "base",
		"--workspace", "root:platform-mesh-system", "--endpoint-slice", slice, "-o", out}, args...)...)
	combined, err := cmd.CombinedOutput()
	t.Logf("provider-kubeconfig %s:\n%s", strings.Join(args, " "), combined)
	return out, string(combined), err
}

// TestProviderKubeconfig writes the virtual-workspace kubeconfig the way
// docs/providers.md does and uses it with kubectl on every consumer.
func TestProviderKubeconfig(t *testing.T) {
	s := platform(t)
	name := framework.UniqueName("pk")
	createAccount(t, s, "root:orgs", name)

	kc, _, err := providerKubeconfig(t, s)
	if err != nil {
		t.Fatal(err)
	}
	k := &framework.Kubectl{Kubeconfig: kc}
	server := strings.TrimSpace(k.Run(t, "config", "view", "--minify", "-o", "jsonpath={.clusters[0].cluster.server}"))
	if !strings.Contains(server, "/services/apiexport/") || !strings.HasSuffix(server, "/"+slice) {
		t.Fatalf("kubeconfig server %q is not the export's virtual workspace", server)
	}
	got := k.Run(t, "--server", server+"/clusters/*", "get", "accounts", "-o", "name")
	if !strings.Contains(got, name) {
		t.Errorf("accounts across consumers through the virtual workspace: %q, want %s", got, name)
	}

	// bob has no rights on the export; granted them, his kubeconfig works.
	bobToken := s.UserToken(t, "bob")
	bob := &framework.Kubectl{Kubeconfig: kc, GlobalArgs: []string{"--token", bobToken}}
	if _, errOut, err := bob.RunErr(t, "--server", server+"/clusters/*", "get", "accounts"); err == nil || !strings.Contains(errOut, "Forbidden") {
		t.Fatalf("bob read the export's content before being granted it: %v %s", err, errOut)
	}
	kcBob, _, err := providerKubeconfig(t, s, "--user", "bob", "--token", bobToken)
	if err != nil {
		t.Fatal(err)
	}
	rules := s.KubectlFor("root:platform-mesh-system").Run(t, "get", "clusterrole", "meshplane:provider:"+slice, "-o", "jsonpath={.rules}")
	for _, want := range []string{"apiexports/content", "apiexportendpointslices"} {
		if !strings.Contains(rules, want) {
			t.Errorf("the provider's ClusterRole lacks %s: %s", want, rules)
		}
	}
	// The export's content and nothing else: no rights on the exported or
	// claimed resources in the provider workspace itself.
	for _, notWant := range []string{"apibindings", "accounts", "accountinfos", "workspaces", "workspacetypes", "namespaces"} {
		if strings.Contains(rules, `"`+notWant+`"`) {
			t.Errorf("the provider's ClusterRole grants %s in the provider workspace: %s", notWant, rules)
		}
	}
	framework.Eventually(t, 30*time.Second, 500*time.Millisecond, "bob's provider kubeconfig to read accounts", func() (bool, string) {
		out, errOut, err := (&framework.Kubectl{Kubeconfig: kcBob}).RunErr(t, "--server", server+"/clusters/*", "get", "accounts", "-o", "name")
		return err == nil && strings.Contains(out, name), out + errOut
	})

	// A ServiceAccount credential: the SA, its rights and a TokenRequest
	// token in the kubeconfig, which reads the export's content.
	kcSA, _, err := providerKubeconfig(t, s, "--service-account", "account-operator", "--namespace", "default")
	if err != nil {
		t.Fatalf("--service-account: %v", err)
	}
	sa := &framework.Kubectl{Kubeconfig: kcSA}
	if tok := sa.Run(t, "config", "view", "--raw", "--minify", "-o", "jsonpath={.users[0].user.token}"); strings.Count(tok, ".") != 2 {
		t.Fatalf("the service-account kubeconfig holds no JWT: %q", tok)
	}
	subjects := s.KubectlFor("root:platform-mesh-system").Run(t, "get", "clusterrolebinding", "meshplane:provider:"+slice, "-o", "jsonpath={.subjects}")
	if !strings.Contains(subjects, `"account-operator"`) || !strings.Contains(subjects, "ServiceAccount") {
		t.Errorf("the ServiceAccount is not bound to the provider's role: %s", subjects)
	}
	framework.Eventually(t, 30*time.Second, 500*time.Millisecond, "the ServiceAccount's kubeconfig to read accounts", func() (bool, string) {
		out, errOut, err := sa.RunErr(t, "--server", server+"/clusters/*", "get", "accounts", "-o", "name")
		return err == nil && strings.Contains(out, name), out + errOut
	})
	// Its token is no key to the provider workspace's other content.
	if _, errOut, err := sa.RunErr(t, "--server", strings.SplitN(server, "/services/", 2)[0]+"/clusters/root:platform-mesh-system", "get", "secrets", "-A"); err == nil {
		t.Errorf("the ServiceAccount read secrets in its workspace: %s", errOut)
	}
}

// TestManagerPathAware starts a multicluster manager with the kit and
// checks that it reconciles Accounts in the bound workspaces and finds a
// workspace by path as well as by logical-cluster name.
func TestManagerPathAware(t *testing.T) {
	s := platform(t)
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{apisv1alpha1.AddToScheme, corev1alpha1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	ctrl.SetLogger(logr.Discard())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	kit, err := manager.New(ctx, s.KCPAdminRESTConfig(t, "root:platform-mesh-system"), manager.Options{
		EndpointSlice: slice,
		Scheme:        scheme,
		Log:           logr.Discard(),
		WaitForURL:    time.Minute,
		Manager:       ctrlmanager.Options{Metrics: metricsserver.Options{BindAddress: "0"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	seen := map[string]string{} // account -> cluster
	err = mcbuilder.ControllerManagedBy(kit.Manager).Named("e2e-accounts").For(&corev1alpha1.Account{}).
		Complete(mcreconcile.Func(func(ctx context.Context, req mcreconcile.Request) (reconcile.Result, error) {
			mu.Lock()
			defer mu.Unlock()
			seen[req.Name] = string(req.ClusterName)
			return reconcile.Result{}, nil
		}))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- kit.Manager.Start(ctx) }()
	defer func() {
		cancel()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Error("the manager did not stop within 30s")
		}
	}()

	name := framework.UniqueName("mgr")
	createAccount(t, s, "root:orgs", name)
	var cluster string
	framework.Eventually(t, time.Minute, 200*time.Millisecond, "the Account in root:orgs to be reconciled", func() (bool, string) {
		mu.Lock()
		defer mu.Unlock()
		cluster = seen[name]
		return cluster != "", fmt.Sprintf("seen %v", seen)
	})
	framework.Eventually(t, time.Minute, 200*time.Millisecond, "root:orgs to be known by path", func() (bool, string) {
		p, ok := kit.Provider.Path(cluster)
		return ok && p == "root:orgs", fmt.Sprintf("path of %s: %q %v", cluster, p, ok)
	})
	byPath, err := kit.Provider.Get(ctx, multicluster.ClusterName("root:orgs"))
	if err != nil {
		t.Fatalf("Get(root:orgs): %v", err)
	}
	byName, err := kit.Provider.Get(ctx, multicluster.ClusterName(cluster))
	if err != nil {
		t.Fatal(err)
	}
	if byPath != byName {
		t.Error("the cluster found by path is not the one found by name")
	}
	acc := &corev1alpha1.Account{}
	if err := byPath.GetClient().Get(ctx, client.ObjectKey{Name: name}, acc); err != nil {
		t.Errorf("reading the Account through the cluster found by path: %v", err)
	}
}
