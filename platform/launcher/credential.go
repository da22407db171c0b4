package launcher

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	apisv1alpha1 "github.com/kcp-dev/sdk/apis/apis/v1alpha1"
	apisv1alpha2 "github.com/kcp-dev/sdk/apis/apis/v1alpha2"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/meshplane/meshplane/providers/credentials"
)

const (
	// operatorKubeconfig is the account-operator's scoped kubeconfig in the
	// root directory; it names operatorToken as its tokenFile.
	operatorKubeconfig = "account-operator.kubeconfig"
	operatorToken      = "account-operator.token"
	providerWorkspace  = "root:platform-mesh-system"
	operatorSlice      = "core.platform-mesh.io"
	operatorNamespace  = "default"
	operatorSA         = "account-operator"
	// DefaultOperatorTokenTTL is the lifetime of the operators' and the
	// example providers' tokens (a kubelet-projected token's default); the
	// launcher mints the next at 80% of it.
	DefaultOperatorTokenTTL = time.Hour
	// useRole is the ClusterRole granting verb "use" on the workspace types
	// the operator assigns (and "initialize" on its own).
	useRole = "meshplane:account-operator:use"
	// OperatorInitializerType is the account-operator's WorkspaceType in
	// the provider workspace (the bootstrap makes it).
	OperatorInitializerType = "account-operator"
)

// OperatorCredential gives the account-operator's ServiceAccount in the
// provider workspace the rights of the export (credentials.Grant), verb
// "use" on the workspace types it assigns (root:org and root:account, and
// every type in root:orgs, where it creates <org>-org and <org>-account)
// and get, use and initialize on the WorkspaceType
// root:platform-mesh-system:account-operator, whose initializer it is.
// It writes a kubeconfig for the ServiceAccount to out, whose tokenFile
// (out with extension .token) holds a fresh token valid for ttl; the
// returned TokenFile keeps it fresh when run (TokenFile.Run).
func OperatorCredential(ctx context.Context, adminKubeconfigPath, out string, ttl time.Duration) (*credentials.TokenFile, error) {
	g, err := grantExport(ctx, adminKubeconfigPath, operatorSA)
	if err != nil {
		return nil, err
	}
	sa := globalServiceAccount(g.exportCluster, operatorNamespace, operatorSA)
	useTypes := rbacv1.PolicyRule{APIGroups: []string{"tenancy.kcp.io"}, Resources: []string{"workspacetypes"}, Verbs: []string{"use"}}
	rootTypes := useTypes
	rootTypes.ResourceNames = []string{"org", "account"}
	initType := rbacv1.PolicyRule{APIGroups: []string{"tenancy.kcp.io"}, Resources: []string{"workspacetypes"},
		ResourceNames: []string{OperatorInitializerType}, Verbs: []string{"get", "use", "initialize"}}
	for path, rules := range map[string][]rbacv1.PolicyRule{
		"root": {rootTypes},
		// Its initializer type, which root:org and root:account extend.
		providerWorkspace: {initType},
		// The per-org types; "access" lets the use check into root:orgs.
		"root:orgs": {useTypes, {NonResourceURLs: []string{"/"}, Verbs: []string{"access"}}},
	} {
		c, err := g.in(path)
		if err != nil {
			return nil, err
		}
		if err := ensureClusterRole(ctx, c, useRole, rules, sa); err != nil {
			return nil, fmt.Errorf("%s in %s: %w", useRole, path, err)
		}
	}
	return TokenKubeconfig(ctx, g.provider, operatorNamespace, operatorSA, out, ttl)
}

// exportGrant is what granting an operator's ServiceAccount the rights of
// the provider workspace's export leaves for the rest of its credential.
type exportGrant struct {
	in            func(path string) (client.Client, error) // an admin client of a workspace
	provider      *rest.Config                             // the admin config of the provider workspace
	exportCluster string                                   // the export's logical cluster
}

// grantExport gives ServiceAccount operatorNamespace/name in the provider
// workspace the rights of the export behind operatorSlice
// (credentials.Grant). Elsewhere the ServiceAccount is named by its global
// name in the export's cluster (a ServiceAccount subject there would name
// one of that workspace).
func grantExport(ctx context.Context, adminKubeconfigPath, name string) (*exportGrant, error) {
	base, err := adminConfig(adminKubeconfigPath)
	if err != nil {
		return nil, err
	}
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{apisv1alpha1.AddToScheme, apisv1alpha2.AddToScheme, corev1.AddToScheme, rbacv1.AddToScheme} {
		if err := add(scheme); err != nil {
			return nil, err
		}
	}
	config := func(path string) *rest.Config {
		cfg := rest.CopyConfig(base)
		cfg.Host = base.Host + "/clusters/" + path
		return cfg
	}
	g := &exportGrant{provider: config(providerWorkspace), in: func(path string) (client.Client, error) {
		return client.New(config(path), client.Options{Scheme: scheme})
	}}
	pc, err := g.in(providerWorkspace)
	if err != nil {
		return nil, err
	}
	slice := &apisv1alpha1.APIExportEndpointSlice{}
	if err := pc.Get(ctx, client.ObjectKey{Name: operatorSlice}, slice); err != nil {
		return nil, fmt.Errorf("APIExportEndpointSlice %s: %w", operatorSlice, err)
	}
	export := &apisv1alpha2.APIExport{}
	if err := pc.Get(ctx, client.ObjectKey{Name: slice.Spec.APIExport.Name}, export); err != nil {
		return nil, fmt.Errorf("APIExport %s: %w", slice.Spec.APIExport.Name, err)
	}
	if err := credentials.Grant(ctx, pc, export, operatorSlice, credentials.Subject{Namespace: operatorNamespace, Name: name}); err != nil {
		return nil, err
	}
	if g.exportCluster = export.Annotations["kcp.io/cluster"]; g.exportCluster == "" {
		return nil, fmt.Errorf("APIExport %s has no kcp.io/cluster annotation", export.Name)
	}
	return g, nil
}

// TokenKubeconfig writes a kubeconfig for ServiceAccount namespace/name of
// the workspace cfg points at (cfg may mint its tokens) to out, naming the
// file out with extension .token as its tokenFile, which it fills with a
// fresh token valid for ttl. The returned TokenFile keeps the file fresh
// when run (TokenFile.Run), as the kubelet does for a pod's projected
// token; the client re-reads the file, so no token it holds expires.
func TokenKubeconfig(ctx context.Context, cfg *rest.Config, namespace, name, out string, ttl time.Duration) (*credentials.TokenFile, error) {
	tf := &credentials.TokenFile{Config: cfg, Namespace: namespace, Name: name, TTL: ttl,
		Path: strings.TrimSuffix(out, filepath.Ext(out)) + ".token"}
	if err := tf.Validate(); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o700); err != nil {
		return nil, err
	}
	if err := tf.Mint(ctx); err != nil {
		return nil, err
	}
	tokenCfg := rest.AnonymousClientConfig(cfg)
	tokenCfg.BearerTokenFile = tf.Path
	kc, err := credentials.Kubeconfig(tokenCfg, cfg.Host, "")
	if err != nil {
		return nil, err
	}
	if err := clientcmd.WriteToFile(*kc, out); err != nil {
		return nil, err
	}
	return tf, nil
}

// runTokenFile keeps tf fresh until ctx ends, refreshing at the launcher's
// --operator-token-refresh age if set and logging failed refreshes.
func runTokenFile(ctx context.Context, c *Config, tf *credentials.TokenFile) {
	tf.RefreshAfter = c.OperatorTokenRefresh
	tf.Logf = func(format string, args ...any) { c.logf("launcher", format, args...) }
	go tf.Run(ctx)
}

// tokenTTL is the lifetime of the tokens the launcher mints.
func (c *Config) tokenTTL() time.Duration {
	if c.OperatorTokenTTL == 0 {
		return DefaultOperatorTokenTTL
	}
	return c.OperatorTokenTTL
}

// globalServiceAccount is the RBAC subject that names ServiceAccount
// namespace/name of cluster in any workspace (kcp's global name; a
// ServiceAccount subject only names one of the binding's own workspace).
func globalServiceAccount(cluster, namespace, name string) rbacv1.Subject {
	return rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName,
		Name: "system:kcp:serviceaccount:" + cluster + ":" + namespace + ":" + name}
}

// operatorKubeconfigPath is where operatorCredential writes.
func operatorKubeconfigPath(c *Config) string { return filepath.Join(c.RootDir, operatorKubeconfig) }
