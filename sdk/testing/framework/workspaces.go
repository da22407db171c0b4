package framework

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// KubectlWSName is the file name kubectl looks for to run `kubectl ws`.
const KubectlWSName = "kubectl-ws"

var (
	wsPluginOnce sync.Once
	wsPluginDir  string
	wsPluginErr  error
)

// KubectlWSBinary returns the path of the kubectl-ws plugin: $KUBECTL_WS_BIN,
// else <repo root>/bin/kubectl-ws, else it is built once per test process
// with `go build ./cmd/kubectl-ws` run in core/ (removed by CleanupBinaries).
func KubectlWSBinary() (string, error) {
	dir, err := KubectlWSDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, KubectlWSName), nil
}

// KubectlWSDir returns a directory holding the plugin as "kubectl-ws", to be
// put in front of $PATH. When $KUBECTL_WS_BIN names a file called otherwise,
// a temporary directory with a symbolic link is made.
func KubectlWSDir() (string, error) {
	wsPluginOnce.Do(func() {
		bin, err := Binary(KubectlWSName, "core", "./cmd/kubectl-ws")
		if err != nil {
			wsPluginErr = fmt.Errorf("finding the kubectl-ws plugin: %w", err)
			return
		}
		if filepath.Base(bin) == KubectlWSName {
			wsPluginDir = filepath.Dir(bin)
			return
		}
		dir, err := os.MkdirTemp("", "meshplane-e2e-plugin-")
		if err != nil {
			wsPluginErr = err
			return
		}
		if err := os.Symlink(bin, filepath.Join(dir, KubectlWSName)); err != nil {
			os.RemoveAll(dir)
			wsPluginErr = fmt.Errorf("linking %s as %s: %w", bin, KubectlWSName, err)
			return
		}
		rememberTempDir(dir)
		wsPluginDir = dir
	})
	return wsPluginDir, wsPluginErr
}

// PluginKubectl returns a kubectl that can run `kubectl ws` (the plugin's
// directory is put in front of $PATH) on a private copy of the kubeconfig at
// path, made in a test temporary directory: the plugin rewrites the
// kubeconfig's current context, so every test gets its own. When context is
// not empty it becomes the copy's current context. The kubeconfig is passed
// as $KUBECONFIG, which the plugin honours too.
func PluginKubectl(t testing.TB, kubeconfig, context, cacheDir string) *Kubectl {
	t.Helper()
	dir, err := KubectlWSDir()
	if err != nil {
		t.Fatalf("%v", err)
	}
	cfg, err := clientcmd.LoadFromFile(kubeconfig)
	if err != nil {
		t.Fatalf("loading kubeconfig %s: %v", kubeconfig, err)
	}
	if context != "" {
		if _, ok := cfg.Contexts[context]; !ok {
			t.Fatalf("kubeconfig %s has no context %q", kubeconfig, context)
		}
		cfg.CurrentContext = context
	}
	name := strings.TrimSuffix(filepath.Base(kubeconfig), filepath.Ext(kubeconfig))
	out := filepath.Join(t.TempDir(), unsafeFileChars.ReplaceAllString(name, "_")+"-copy.kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, out); err != nil {
		t.Fatalf("writing a copy of %s: %v", kubeconfig, err)
	}
	return &Kubectl{Kubeconfig: out, KubeconfigEnv: true, PathPrepend: []string{dir}, CacheDir: cacheDir}
}

// WorkspaceKubectl returns a kubectl with the kubectl-ws plugin on a private
// copy of admin.kubeconfig whose current context is context ("root": the
// kcp-admin user on /clusters/root, like kcp's admin.kubeconfig).
func (s *Server) WorkspaceKubectl(t testing.TB, context string) *Kubectl {
	t.Helper()
	return PluginKubectl(t, s.Kubeconfig, context, s.kubectlCacheDir())
}

// UserWorkspaceKubectl returns a kubectl with the kubectl-ws plugin acting as
// a token user, starting on /clusters/<cluster> (see WriteUserKubeconfig).
func (s *Server) UserWorkspaceKubectl(t testing.TB, user, cluster string) *Kubectl {
	t.Helper()
	return PluginKubectl(t, s.WriteUserKubeconfig(t, user, cluster), "", s.kubectlCacheDir())
}

// WS runs `kubectl ws args...` and returns stdout, failing the test with
// stderr if it fails.
func (k *Kubectl) WS(t testing.TB, args ...string) string {
	t.Helper()
	return k.Run(t, append([]string{"ws"}, args...)...)
}

// WSErr runs `kubectl ws args...` and returns stdout, stderr and the error.
func (k *Kubectl) WSErr(t testing.TB, args ...string) (string, string, error) {
	t.Helper()
	return k.RunErr(t, append([]string{"ws"}, args...)...)
}

// KubeconfigState reads the kubectl's kubeconfig file as it is now.
func (k *Kubectl) KubeconfigState(t testing.TB) *clientcmdapi.Config {
	t.Helper()
	cfg, err := clientcmd.LoadFromFile(k.Kubeconfig)
	if err != nil {
		t.Fatalf("loading kubeconfig %s: %v", k.Kubeconfig, err)
	}
	return cfg
}

// CurrentServer returns the server URL of the kubeconfig's current context.
func (k *Kubectl) CurrentServer(t testing.TB) string {
	t.Helper()
	cfg := k.KubeconfigState(t)
	ctx, ok := cfg.Contexts[cfg.CurrentContext]
	if !ok {
		t.Fatalf("kubeconfig %s: current context %q does not exist", k.Kubeconfig, cfg.CurrentContext)
	}
	cl, ok := cfg.Clusters[ctx.Cluster]
	if !ok {
		t.Fatalf("kubeconfig %s: context %q refers to missing cluster %q", k.Kubeconfig, cfg.CurrentContext, ctx.Cluster)
	}
	return cl.Server
}

// CurrentWorkspace returns the workspace path of the kubeconfig's current
// context: what follows /clusters/ in its server URL ("" if none).
func (k *Kubectl) CurrentWorkspace(t testing.TB) string {
	t.Helper()
	server := k.CurrentServer(t)
	u, err := url.Parse(server)
	if err != nil {
		t.Fatalf("kubeconfig %s: invalid server URL %q: %v", k.Kubeconfig, server, err)
	}
	_, p, ok := strings.Cut(u.Path, "/clusters/")
	if !ok {
		return ""
	}
	return strings.TrimSuffix(p, "/")
}

// ContextRESTConfig is a client-go config from a context of admin.kubeconfig
// with its server replaced by host (kept when empty). Context "root" (and
// "base") authenticate as kcp-admin, "shard-base" as the shard admin.
func (s *Server) ContextRESTConfig(t testing.TB, context, host string) *rest.Config {
	t.Helper()
	cfg, err := s.configFor(context, host)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// KCPAdminRESTConfig is a client-go config for kcp-admin (the user of the
// root context of admin.kubeconfig) on logical cluster or workspace path
// cluster (see ClusterURL).
func (s *Server) KCPAdminRESTConfig(t testing.TB, cluster string) *rest.Config {
	t.Helper()
	return s.ContextRESTConfig(t, "root", s.ClusterURL(cluster))
}

// KCPAdminToken is kcp-admin's bearer token.
func (s *Server) KCPAdminToken(t testing.TB) string {
	t.Helper()
	cfg := s.ContextRESTConfig(t, "root", "")
	if cfg.BearerToken == "" {
		t.Fatalf("context root in %s has no bearer token", s.Kubeconfig)
	}
	return cfg.BearerToken
}
