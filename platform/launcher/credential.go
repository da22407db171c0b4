package launcher

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	apisv1alpha1 "github.com/kcp-dev/sdk/apis/apis/v1alpha1"
	apisv1alpha2 "github.com/kcp-dev/sdk/apis/apis/v1alpha2"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
	// DefaultOperatorTokenTTL is the token's lifetime (a kubelet-projected
	// token's default); the launcher mints the next at 80% of it.
	DefaultOperatorTokenTTL = time.Hour
	// longTokenTTL is the lifetime of the tokens minted once at start for
	// the security-operator and the example providers (they are not
	// refreshed yet, unlike the account-operator's).
	longTokenTTL = 30 * 24 * time.Hour
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
	in := func(path string) (*rest.Config, client.Client, error) {
		cfg := rest.CopyConfig(base)
		cfg.Host = base.Host + "/clusters/" + path
		c, err := client.New(cfg, client.Options{Scheme: scheme})
		return cfg, c, err
	}
	pcfg, pc, err := in(providerWorkspace)
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
	subject := credentials.Subject{Namespace: operatorNamespace, Name: operatorSA}
	if err := credentials.Grant(ctx, pc, export, operatorSlice, subject); err != nil {
		return nil, err
	}
	sa := rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: operatorNamespace, Name: operatorSA}
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
		_, c, err := in(path)
		if err != nil {
			return nil, err
		}
		if err := ensureRole(ctx, c, rules, sa); err != nil {
			return nil, fmt.Errorf("%s in %s: %w", useRole, path, err)
		}
	}
	tf := &credentials.TokenFile{Config: pcfg, Namespace: operatorNamespace, Name: operatorSA, TTL: ttl,
		Path: strings.TrimSuffix(out, filepath.Ext(out)) + ".token"}
	if err := tf.Validate(); err != nil {
		return nil, err
	}
	if err := tf.Mint(ctx); err != nil {
		return nil, err
	}
	tokenCfg := rest.AnonymousClientConfig(pcfg)
	tokenCfg.BearerTokenFile = tf.Path
	kc, err := credentials.Kubeconfig(tokenCfg, pcfg.Host, "")
	if err != nil {
		return nil, err
	}
	if err := clientcmd.WriteToFile(*kc, out); err != nil {
		return nil, err
	}
	return tf, nil
}

// ensureRole creates or updates the ClusterRole useRole with rules and its
// ClusterRoleBinding to subject.
func ensureRole(ctx context.Context, c client.Client, rules []rbacv1.PolicyRule, subject rbacv1.Subject) error {
	role := &rbacv1.ClusterRole{}
	switch err := c.Get(ctx, client.ObjectKey{Name: useRole}, role); {
	case apierrors.IsNotFound(err):
		if err := c.Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: useRole}, Rules: rules}); err != nil {
			return err
		}
	case err != nil:
		return err
	default:
		role.Rules = rules
		if err := c.Update(ctx, role); err != nil {
			return err
		}
	}
	binding := &rbacv1.ClusterRoleBinding{}
	switch err := c.Get(ctx, client.ObjectKey{Name: useRole}, binding); {
	case apierrors.IsNotFound(err):
		return c.Create(ctx, &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: useRole},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: useRole},
			Subjects:   []rbacv1.Subject{subject},
		})
	case err != nil:
		return err
	case !slices.Contains(binding.Subjects, subject):
		binding.Subjects = append(binding.Subjects, subject)
		return c.Update(ctx, binding)
	}
	return nil
}

// operatorKubeconfigPath is where operatorCredential writes.
func operatorKubeconfigPath(c *Config) string { return filepath.Join(c.RootDir, operatorKubeconfig) }
