package launcher

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	apisv1alpha2 "github.com/kcp-dev/sdk/apis/apis/v1alpha2"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/meshplane/meshplane/platform/bootstrap"
	"github.com/meshplane/meshplane/providers/credentials"
	"github.com/meshplane/meshplane/sdk/platformenv"
	"github.com/meshplane/meshplane/sdk/testing/postgres"
)

// Examples are the example providers `--examples` may name (see
// docs/examples.md); none runs by default.
var Examples = []string{"mongodb", "postgres"}

// ValidateExamples checks a list of example names.
func ValidateExamples(names []string) error {
	for _, n := range names {
		if !slices.Contains(Examples, n) {
			return fmt.Errorf("unknown example %q (known: %s)", n, strings.Join(Examples, ", "))
		}
	}
	return nil
}

// exampleComponents are the example providers named in c.Examples. Each
// gets a provider workspace root:examples-<name> with the example's export,
// a demo consumer root:examples-<name>-demo bound to it (accepting the
// claim on secrets; the export's endpoint slice has a URL once a workspace
// binds it), and a scoped ServiceAccount credential, as the example's
// README does by hand. The mongodb example's downstream cluster is the
// workspace root:examples-mongodb-downstream; the postgres example runs
// against a PostgreSQL server the launcher starts (Debian's postgresql,
// data in a temp directory, superuser password kept in the root
// directory), whose URL is POSTGRES_DSN in platform.env.
func exampleComponents(c *Config) []Component {
	var out []Component
	for _, name := range c.Examples {
		switch name {
		case "mongodb":
			out = append(out, mongodbExample(c))
		case "postgres":
			out = append(out, postgresExample(c))
		}
	}
	return out
}

func exampleDir(c *Config, name string) string { return filepath.Join(c.ExamplesDir, name) }

func mongodbExample(c *Config) Component {
	health := fmt.Sprintf("127.0.0.1:%d", c.Ports.ExampleMongoDBHealth())
	dir := filepath.Join(c.RootDir, "examples")
	providerKC, downstreamKC := filepath.Join(dir, "mongodb-provider.kubeconfig"), filepath.Join(dir, "mongodb-downstream.kubeconfig")
	return Component{
		Name:   "mongodb-provider",
		Binary: "mongodb-provider",
		BeforeStart: func(ctx context.Context) error {
			base, err := adminConfig(filepath.Join(c.RootDir, adminKubeconfig))
			if err != nil {
				return err
			}
			if err := setUpExample(ctx, c, base, "mongodb", "mongodb.examples.meshplane.io", providerKC); err != nil {
				return err
			}
			if err := ensureWorkspace(ctx, base, "examples-mongodb-downstream"); err != nil {
				return err
			}
			if err := bootstrap.ApplyDir(ctx, base, "root:examples-mongodb-downstream", filepath.Join(exampleDir(c, "mongodb"), "config", "downstream")); err != nil {
				return err
			}
			return writeWorkspaceKubeconfig(filepath.Join(c.RootDir, adminKubeconfig), c.CoreURL()+"/clusters/root:examples-mongodb-downstream", downstreamKC)
		},
		Args: []string{"--kubeconfig", providerKC, "--workspace", "root:examples-mongodb",
			"--downstream-kubeconfig", downstreamKC,
			"--metrics-bind-address", "0", "--health-probe-bind-address", health},
		Ready: func(ctx context.Context) error { return waitHTTPOK(ctx, "http://"+health+"/readyz") },
	}
}

func postgresExample(c *Config) Component {
	health := fmt.Sprintf("127.0.0.1:%d", c.Ports.ExamplePostgresHealth())
	providerKC := filepath.Join(c.RootDir, "examples", "postgres-provider.kubeconfig")
	password, err := examplePassword(filepath.Join(c.RootDir, "examples", "postgres.password"))
	srv := &postgres.Server{Host: "127.0.0.1", Port: c.Ports.ExamplePostgres(), Password: password}
	dsn := srv.DSN("")
	var started *postgres.Server
	return Component{
		Name:   "postgres-provider",
		Binary: "postgres-provider",
		BeforeStart: func(ctx context.Context) error {
			if err != nil {
				return err
			}
			if started, err = postgres.Start(ctx, postgres.Options{Port: srv.Port, Password: password}); err != nil {
				return fmt.Errorf("starting PostgreSQL for the postgres example: %w", err)
			}
			base, err := adminConfig(filepath.Join(c.RootDir, adminKubeconfig))
			if err != nil {
				return err
			}
			return setUpExample(ctx, c, base, "postgres", "postgres.examples.meshplane.io", providerKC)
		},
		Cleanup: func() error {
			if started == nil {
				return nil
			}
			return started.Stop()
		},
		Args: []string{"--kubeconfig", providerKC, "--workspace", "root:examples-postgres", "--dsn", dsn,
			"--metrics-bind-address", "0", "--health-probe-bind-address", health},
		Ready: func(ctx context.Context) error { return waitHTTPOK(ctx, "http://"+health+"/readyz") },
		Env:   []platformenv.Entry{{Key: "POSTGRES_DSN", Value: dsn}},
	}
}

// setUpExample creates root:examples-<name> with the example's export and
// root:examples-<name>-demo bound to it, and writes the provider's scoped
// kubeconfig (ServiceAccount <name>-provider, TokenRequest token) to out.
func setUpExample(ctx context.Context, c *Config, base *rest.Config, name, export, out string) error {
	provider, demo := "examples-"+name, "examples-"+name+"-demo"
	for _, ws := range []string{provider, demo} {
		if err := ensureWorkspace(ctx, base, ws); err != nil {
			return err
		}
	}
	if err := bootstrap.ApplyDir(ctx, base, "root:"+provider, filepath.Join(exampleDir(c, name), "config", "kcp")); err != nil {
		return err
	}
	binding := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apis.kcp.io/v1alpha2", "kind": "APIBinding",
		"metadata": map[string]any{"name": name},
		"spec": map[string]any{
			"reference": map[string]any{"export": map[string]any{"path": "root:" + provider, "name": export}},
			"permissionClaims": []any{map[string]any{"group": "", "resource": "secrets", "verbs": []any{"get", "create", "update", "delete"},
				"selector": map[string]any{"matchAll": true}, "state": "Accepted"}},
		},
	}}
	if err := bootstrap.ApplyObjects(ctx, base, "root:"+demo, []*unstructured.Unstructured{binding}, name); err != nil {
		return err
	}
	return exampleCredential(ctx, c, base, "root:"+provider, export, name+"-provider", out)
}

// ensureWorkspace creates root:<name> if needed and waits until it is Ready.
// It is placed on the root shard (label name=root), which base reaches:
// with several shards it could land on one base does not serve.
func ensureWorkspace(ctx context.Context, base *rest.Config, name string) error {
	ws := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "tenancy.kcp.io/v1alpha1", "kind": "Workspace", "metadata": map[string]any{"name": name},
		"spec": map[string]any{"location": map[string]any{"selector": map[string]any{"matchLabels": map[string]any{"name": "root"}}}}}}
	if err := bootstrap.ApplyObjects(ctx, base, "root", []*unstructured.Unstructured{ws}); err != nil {
		return err
	}
	return bootstrap.WaitWorkspaceReady(ctx, base, "root", name)
}

// exampleCredential grants ServiceAccount sa (namespace default) in the
// provider workspace the export's rights and writes a kubeconfig with a
// token file the launcher keeps fresh (TokenKubeconfig), as for the
// account-operator.
func exampleCredential(ctx context.Context, c *Config, base *rest.Config, workspace, export, sa, out string) error {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{apisv1alpha2.AddToScheme, corev1.AddToScheme, rbacv1.AddToScheme} {
		if err := add(scheme); err != nil {
			return err
		}
	}
	cfg := rest.CopyConfig(base)
	cfg.Host = strings.TrimSuffix(base.Host, "/") + "/clusters/" + workspace
	cl, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return err
	}
	exp := &apisv1alpha2.APIExport{}
	if err := cl.Get(ctx, client.ObjectKey{Name: export}, exp); err != nil {
		return fmt.Errorf("APIExport %s in %s: %w", export, workspace, err)
	}
	if err := credentials.Grant(ctx, cl, exp, export, credentials.Subject{Namespace: "default", Name: sa}); err != nil {
		return err
	}
	tf, err := TokenKubeconfig(ctx, cfg, "default", sa, out, c.tokenTTL())
	if err != nil {
		return err
	}
	runTokenFile(ctx, c, tf)
	return nil
}

// writeWorkspaceKubeconfig writes the admin kubeconfig with its current
// context pointed at server.
func writeWorkspaceKubeconfig(admin, server, out string) error {
	cfg, err := clientcmd.LoadFromFile(admin)
	if err != nil {
		return err
	}
	ctx := cfg.Contexts["base"]
	if ctx == nil {
		return errors.New(admin + " has no context base")
	}
	cfg.Clusters[ctx.Cluster].Server = server
	cfg.CurrentContext = "base"
	if err := os.MkdirAll(filepath.Dir(out), 0o700); err != nil {
		return err
	}
	return clientcmd.WriteToFile(*cfg, out)
}

// examplePassword reads the password kept in path, creating it the first
// time, so POSTGRES_DSN stays the same across restarts.
func examplePassword(path string) (string, error) {
	if b, err := os.ReadFile(path); err == nil && len(strings.TrimSpace(string(b))) > 0 {
		return strings.TrimSpace(string(b)), nil
	}
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	pw := hex.EncodeToString(b)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", err
	}
	return pw, os.WriteFile(path, []byte(pw+"\n"), 0o600)
}
