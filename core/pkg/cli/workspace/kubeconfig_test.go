package workspace

import (
	"testing"

	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

func testKubeconfig() *clientcmdapi.Config {
	return &clientcmdapi.Config{
		CurrentContext: "admin",
		Clusters: map[string]*clientcmdapi.Cluster{
			"mp": {Server: "https://h:6443/clusters/root", CertificateAuthorityData: []byte("CA"), TLSServerName: "mp.local"},
		},
		AuthInfos: map[string]*clientcmdapi.AuthInfo{
			"admin": {Token: "t"},
			"other": {Token: "o"},
		},
		Contexts: map[string]*clientcmdapi.Context{
			"admin": {Cluster: "mp", AuthInfo: "admin", Namespace: "ns"},
			"alt":   {Cluster: "mp", AuthInfo: "other"},
		},
	}
}

func serverOf(t *testing.T, c *clientcmdapi.Config, ctx string) string {
	t.Helper()
	kctx, ok := c.Contexts[ctx]
	if !ok {
		t.Fatalf("context %q missing", ctx)
	}
	cl, ok := c.Clusters[kctx.Cluster]
	if !ok {
		t.Fatalf("cluster %q of context %q missing", kctx.Cluster, ctx)
	}
	return cl.Server
}

func TestSwitchWorkspaceFromPlainContext(t *testing.T) {
	in := testKubeconfig()
	out, err := switchWorkspace(kubeconfigState{config: in, contextName: "admin"}, "https://h:6443/clusters/root:a")
	if err != nil {
		t.Fatal(err)
	}
	if out.CurrentContext != currentContextKey {
		t.Errorf("current-context = %q", out.CurrentContext)
	}
	cur := out.Contexts[currentContextKey]
	if cur.Cluster != currentContextKey || cur.AuthInfo != "admin" || cur.Namespace != "ns" {
		t.Errorf("current context = %+v", cur)
	}
	cl := out.Clusters[currentContextKey]
	if cl.Server != "https://h:6443/clusters/root:a" || string(cl.CertificateAuthorityData) != "CA" || cl.TLSServerName != "mp.local" {
		t.Errorf("current cluster = %+v", cl)
	}
	// the previous context is the untouched original one
	prev := out.Contexts[previousContextKey]
	if prev.Cluster != "mp" || prev.AuthInfo != "admin" {
		t.Errorf("previous context = %+v", prev)
	}
	if _, ok := out.Clusters[previousContextKey]; ok {
		t.Errorf("no previous cluster expected when coming from a plain context")
	}
	// input untouched
	if in.CurrentContext != "admin" || len(in.Contexts) != 2 || in.Clusters["mp"].Server != "https://h:6443/clusters/root" {
		t.Errorf("input kubeconfig modified: %+v", in)
	}
}

func TestSwitchWorkspaceTwiceKeepsPrevious(t *testing.T) {
	c := testKubeconfig()
	c, err := switchWorkspace(kubeconfigState{config: c, contextName: "admin"}, "https://h:6443/clusters/root:a")
	if err != nil {
		t.Fatal(err)
	}
	c, err = switchWorkspace(kubeconfigState{config: c, contextName: c.CurrentContext}, "https://h:6443/clusters/root:a:b")
	if err != nil {
		t.Fatal(err)
	}
	if got := serverOf(t, c, currentContextKey); got != "https://h:6443/clusters/root:a:b" {
		t.Errorf("current server = %q", got)
	}
	if got := serverOf(t, c, previousContextKey); got != "https://h:6443/clusters/root:a" {
		t.Errorf("previous server = %q", got)
	}
	if c.Contexts[previousContextKey].Cluster != previousContextKey {
		t.Errorf("previous context should use the previous cluster, got %+v", c.Contexts[previousContextKey])
	}
	if string(c.Clusters[previousContextKey].CertificateAuthorityData) != "CA" {
		t.Errorf("previous cluster lost its CA")
	}
}

func TestSwitchWorkspaceUsesContextOverride(t *testing.T) {
	out, err := switchWorkspace(kubeconfigState{config: testKubeconfig(), contextName: "alt"}, "https://h:6443/clusters/root:x")
	if err != nil {
		t.Fatal(err)
	}
	if out.Contexts[currentContextKey].AuthInfo != "other" {
		t.Errorf("user should come from the context in use, got %+v", out.Contexts[currentContextKey])
	}
	if out.Contexts[previousContextKey].AuthInfo != "other" {
		t.Errorf("previous should be the context in use, got %+v", out.Contexts[previousContextKey])
	}
}

func TestSwitchWorkspaceErrors(t *testing.T) {
	c := testKubeconfig()
	if _, err := switchWorkspace(kubeconfigState{config: c, contextName: "nope"}, "https://x/clusters/root"); err == nil {
		t.Error("expected error for unknown context")
	}
	if _, err := switchWorkspace(kubeconfigState{config: c, contextName: ""}, "https://x/clusters/root"); err == nil {
		t.Error("expected error without current context")
	}
	c.Contexts["broken"] = &clientcmdapi.Context{Cluster: "missing"}
	if _, err := switchWorkspace(kubeconfigState{config: c, contextName: "broken"}, "https://x/clusters/root"); err == nil {
		t.Error("expected error for missing cluster")
	}
}

func TestSwapWorkspaces(t *testing.T) {
	c := testKubeconfig()
	if _, _, err := swapWorkspaces(kubeconfigState{config: c, contextName: "admin"}); err == nil {
		t.Fatal("expected error without previous workspace")
	}

	// plain context -> root:a: previous is the plain context
	c, err := switchWorkspace(kubeconfigState{config: c, contextName: "admin"}, "https://h:6443/clusters/root:a")
	if err != nil {
		t.Fatal(err)
	}
	c, server, err := swapWorkspaces(kubeconfigState{config: c, contextName: c.CurrentContext})
	if err != nil {
		t.Fatal(err)
	}
	if server != "https://h:6443/clusters/root" || serverOf(t, c, currentContextKey) != server {
		t.Errorf("after swap current = %q / %q", server, serverOf(t, c, currentContextKey))
	}
	if got := serverOf(t, c, previousContextKey); got != "https://h:6443/clusters/root:a" {
		t.Errorf("after swap previous = %q", got)
	}
	if c.CurrentContext != currentContextKey {
		t.Errorf("current-context = %q", c.CurrentContext)
	}

	// swap back and forth between two workspace clusters
	c, _ = switchWorkspace(kubeconfigState{config: c, contextName: c.CurrentContext}, "https://h:6443/clusters/root:b")
	for i, want := range []string{"https://h:6443/clusters/root", "https://h:6443/clusters/root:b", "https://h:6443/clusters/root"} {
		c, server, err = swapWorkspaces(kubeconfigState{config: c, contextName: c.CurrentContext})
		if err != nil {
			t.Fatal(err)
		}
		if server != want || serverOf(t, c, currentContextKey) != want {
			t.Errorf("swap %d: current = %q / %q, want %q", i, server, serverOf(t, c, currentContextKey), want)
		}
		if c.Contexts[currentContextKey].AuthInfo != "admin" || c.Contexts[previousContextKey].AuthInfo != "admin" {
			t.Errorf("swap %d: user lost", i)
		}
	}
	// the original context is left alone
	if serverOf(t, c, "admin") != "https://h:6443/clusters/root" {
		t.Errorf("original context changed")
	}
}

func TestCreateContextEdit(t *testing.T) {
	st := kubeconfigState{config: testKubeconfig(), contextName: "admin"}
	out, existed, err := createContext(st, "root:a", "https://h:6443/clusters/root:a", false, false)
	if err != nil || existed {
		t.Fatalf("createContext: %v, existed=%v", err, existed)
	}
	if out.CurrentContext != "root:a" || serverOf(t, out, "root:a") != "https://h:6443/clusters/root:a" || out.Contexts["root:a"].AuthInfo != "admin" {
		t.Errorf("unexpected result %+v", out.Contexts["root:a"])
	}
	out, _, err = createContext(st, "keep", "", false, true)
	if err != nil {
		t.Fatal(err)
	}
	if out.CurrentContext != "admin" || serverOf(t, out, "keep") != "https://h:6443/clusters/root" {
		t.Errorf("keepCurrent: current=%q server=%q", out.CurrentContext, serverOf(t, out, "keep"))
	}
	if _, _, err := createContext(st, "alt", "", false, false); err == nil {
		t.Error("expected error for existing context without overwrite")
	}
	if _, existed, err := createContext(st, "alt", "", true, false); err != nil || !existed {
		t.Errorf("overwrite: %v, existed=%v", err, existed)
	}
}
