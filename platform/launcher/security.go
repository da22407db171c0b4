package launcher

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/meshplane/meshplane/providers/credentials"
	"github.com/meshplane/meshplane/sdk/platformenv"
)

// Port offsets of OpenFGA and the security-operator (see ports.go for the
// others).
const (
	offsetOpenFGAHTTP             = 6
	offsetOpenFGAGRPC             = 7
	offsetOpenFGAMetrics          = 8
	offsetSecurityOperatorMetrics = 9
	offsetSecurityOperatorHealth  = 10
)

// The model limits of the platform's OpenFGA (apis/fga MaxTypesPerModel,
// MaxModelSizeBytes): OpenFGA's defaults, 100 types and 256 KiB, are too
// small for an organization with a few hundred bound resources.
const (
	openFGAMaxTypes     = 2000
	openFGAMaxModelSize = 8 << 20
)

const (
	securityOperatorKubeconfig = "security-operator.kubeconfig"
	securityOperatorSA         = "security-operator"
	securityRole               = "meshplane:security-operator"
	securityUseRole            = "meshplane:security:use"
	// securityType is the WorkspaceType whose initializer and terminator
	// the security-operator is.
	securityType = "security"
)

// OpenFGAURL is the HTTP API of the platform's OpenFGA: the external one
// of --openfga-url, or the one the launcher starts.
func (c *Config) OpenFGAURL() string {
	if c.ExternalOpenFGA != "" {
		return c.ExternalOpenFGA
	}
	return "http://" + c.openFGAAddr(offsetOpenFGAHTTP)
}

// openFGAKeyFile holds the preshared API key of the platform's OpenFGA
// ("" for an external one without --openfga-preshared-key-file).
func (c *Config) openFGAKeyFile() string {
	if c.ExternalOpenFGA != "" {
		return c.ExternalOpenFGAKeyFile
	}
	return filepath.Join(c.RootDir, "openfga", openFGAKeyFileName)
}

// openFGAKeyArgs hand the key file to a client of OpenFGA.
func (c *Config) openFGAKeyArgs() []string {
	if f := c.openFGAKeyFile(); f != "" {
		return []string{"--openfga-preshared-key-file", f}
	}
	return nil
}

// openFGAKeyEnv is the key file's platform.env line.
func (c *Config) openFGAKeyEnv() []platformenv.Entry {
	if f := c.openFGAKeyFile(); f != "" {
		return []platformenv.Entry{{Key: "OPENFGA_PRESHARED_KEY_FILE", Value: f}}
	}
	return nil
}

// openFGAAddr is the loopback address of one of the launcher's OpenFGA
// ports.
func (c *Config) openFGAAddr(offset int) string {
	return "127.0.0.1:" + strconv.Itoa(c.Ports.Base+offset)
}

// openFGAComponents is the platform's OpenFGA: bin/openfga (OpenFGA's own
// server) with a SQLite store in <root>/openfga, its check-query and
// iterator caches on, taking only calls with its preshared API key (made
// once in <root>/openfga/preshared.key, mode 0600, read by the
// security-operator and the rebac-authz-webhook); none when --openfga-url
// names an external one.
func openFGAComponents(c *Config) []Component {
	if c.ExternalOpenFGA != "" {
		return nil
	}
	dir := filepath.Join(c.RootDir, "openfga")
	uri := "file:" + filepath.Join(dir, "openfga.db")
	return []Component{{
		Name:   "openfga",
		Binary: "openfga",
		BeforeStart: func(ctx context.Context) error {
			if err := os.MkdirAll(dir, 0o700); err != nil {
				return err
			}
			if err := ensureKeyFile(c.openFGAKeyFile()); err != nil {
				return fmt.Errorf("openfga preshared key: %w", err)
			}
			// Creates or upgrades the schema; a no-op on an up-to-date store.
			out, err := exec.CommandContext(ctx, filepath.Join(c.BinDir, "openfga"), "migrate",
				"--datastore-engine", "sqlite", "--datastore-uri", uri).CombinedOutput()
			if err != nil {
				return fmt.Errorf("openfga migrate: %w: %s", err, out)
			}
			return nil
		},
		Args: append([]string{"run",
			"--datastore-engine", "sqlite", "--datastore-uri", uri,
			"--http-addr", c.openFGAAddr(offsetOpenFGAHTTP), "--grpc-addr", c.openFGAAddr(offsetOpenFGAGRPC),
			"--metrics-addr", c.openFGAAddr(offsetOpenFGAMetrics),
			"--playground-enabled=false", "--log-format", "json", "--log-level", "warn",
			"--check-query-cache-enabled", "--check-iterator-cache-enabled",
			// Tuple writes invalidate the caches within a second.
			"--cache-controller-enabled", "--cache-controller-ttl", "1s",
			"--max-types-per-authorization-model", strconv.Itoa(openFGAMaxTypes),
			"--max-authorization-model-size-in-bytes", strconv.Itoa(openFGAMaxModelSize),
			// The type-system and model caches keep OpenFGA's defaults
			// (~1.4 MiB per organization, no idle expiry): a bound below the
			// active organizations costs ~4 ms of CPU per Check or Write
			// outside it (docs/authorization.md); --openfga-args can set one.
		}, c.OpenFGAArgs...),
		// The key file's path, not the key: no other process sees it.
		Environ: []string{"OPENFGA_AUTHN_PRESHARED_KEYS_FILE=" + c.openFGAKeyFile()},
		Ready:   func(ctx context.Context) error { return waitHTTPOK(ctx, c.OpenFGAURL()+"/healthz") },
		Env:     append([]platformenv.Entry{{Key: "OPENFGA_URL", Value: c.OpenFGAURL()}}, c.openFGAKeyEnv()...),
	}}
}

// securityOperatorComponent is the security-operator: Stores become
// OpenFGA stores, and it initializes and terminates workspaces of type
// root:security. It runs with a scoped credential: a ServiceAccount in the
// provider workspace with the export's rights and "initialize" and
// "terminate" on the WorkspaceType security.
func securityOperatorComponent(c *Config) Component {
	health := fmt.Sprintf("127.0.0.1:%d", c.Ports.Base+offsetSecurityOperatorHealth)
	kubeconfig := filepath.Join(c.RootDir, securityOperatorKubeconfig)
	args := []string{
		"--kubeconfig", kubeconfig,
		// The core accepts the ServiceAccount's token only in its own
		// workspace; the WorkspaceType and its lifecycle virtual
		// workspaces are reached with the admin credential until it
		// does (the RBAC for the ServiceAccount is in place already).
		"--lifecycle-kubeconfig", filepath.Join(c.RootDir, adminKubeconfig),
		"--lifecycle-context", "base",
		// The shard admin may watch APIBindings and CRDs across all
		// workspaces: organizations are discovered again when their APIs
		// change, not every 30 s (as the GraphQL gateway follows them).
		"--api-changes-kubeconfig", filepath.Join(c.RootDir, adminKubeconfig),
		"--api-changes-context", "shard-base",
		"--workspace", providerWorkspace,
		"--openfga-url", c.OpenFGAURL(),
		"--workspace-type", "root:" + securityType,
		"--metrics-bind-address", fmt.Sprintf("127.0.0.1:%d", c.Ports.Base+offsetSecurityOperatorMetrics),
		"--health-probe-bind-address", health,
	}
	args = append(args, c.openFGAKeyArgs()...)
	if c.OrganizationStores != "" {
		args = append(args, "--organization-stores", c.OrganizationStores)
	}
	if c.Shards >= 2 {
		// Organizations on every shard: their discovery and paths through
		// the proxy (a shard refuses clusters it does not host).
		args = append(args, "--front-proxy-kubeconfig", c.ProxyKubeconfig(), "--front-proxy-context", "base")
	}
	if c.ExternalOpenFGA == "" {
		// Tuple writes (one per account) over the platform's OpenFGA's
		// gRPC port, sparing it its HTTP gateway.
		args = append(args, "--openfga-grpc-addr", c.openFGAAddr(offsetOpenFGAGRPC))
	}
	comp := Component{
		Name:   "security-operator",
		Binary: "security-operator",
		BeforeStart: func(ctx context.Context) error {
			tf, err := SecurityOperatorCredential(ctx, filepath.Join(c.RootDir, adminKubeconfig), kubeconfig, c.tokenTTL())
			if err != nil {
				return err
			}
			runTokenFile(ctx, c, tf)
			return nil
		},
		// The extra arguments last: they may replace any of these.
		Args:  append(args, c.SecurityOperatorArgs...),
		Ready: func(ctx context.Context) error { return waitHTTPOK(ctx, "http://"+health+"/readyz") },
	}
	if c.ExternalOpenFGA != "" {
		comp.Env = append([]platformenv.Entry{{Key: "OPENFGA_URL", Value: c.ExternalOpenFGA}}, c.openFGAKeyEnv()...)
	}
	return comp
}

// SecurityOperatorCredential gives the security-operator's ServiceAccount
// in the provider workspace the rights of the export and, in root, read,
// "initialize" and "terminate" on the WorkspaceType security, and writes
// a kubeconfig to out whose tokenFile holds a token valid for ttl; the
// returned TokenFile keeps it fresh when run (see TokenKubeconfig).
func SecurityOperatorCredential(ctx context.Context, adminKubeconfigPath, out string, ttl time.Duration) (*credentials.TokenFile, error) {
	g, err := grantExport(ctx, adminKubeconfigPath, securityOperatorSA)
	if err != nil {
		return nil, err
	}
	rc, err := g.in("root")
	if err != nil {
		return nil, err
	}
	rules := []rbacv1.PolicyRule{
		{APIGroups: []string{"tenancy.kcp.io"}, Resources: []string{"workspacetypes"}, ResourceNames: []string{securityType},
			Verbs: []string{"get", "list", "watch", "initialize", "terminate"}},
		{NonResourceURLs: []string{"/"}, Verbs: []string{"access"}},
	}
	// In root the ServiceAccounts are named by their global names.
	sa := globalServiceAccount(g.exportCluster, operatorNamespace, securityOperatorSA)
	if err := ensureClusterRole(ctx, rc, securityRole, rules, sa); err != nil {
		return nil, fmt.Errorf("%s in root: %w", securityRole, err)
	}
	// org and account extend security, so whoever creates workspaces of
	// those types (the account-operator) needs "use" on it too.
	use := []rbacv1.PolicyRule{{APIGroups: []string{"tenancy.kcp.io"}, Resources: []string{"workspacetypes"}, ResourceNames: []string{securityType}, Verbs: []string{"use"}}}
	accountOperator := globalServiceAccount(g.exportCluster, operatorNamespace, operatorSA)
	if err := ensureClusterRole(ctx, rc, securityUseRole, use, accountOperator); err != nil {
		return nil, fmt.Errorf("%s in root: %w", securityUseRole, err)
	}
	return TokenKubeconfig(ctx, g.provider, operatorNamespace, securityOperatorSA, out, ttl)
}

// ensureClusterRole creates or updates ClusterRole name with rules and
// its ClusterRoleBinding to subject.
func ensureClusterRole(ctx context.Context, c client.Client, name string, rules []rbacv1.PolicyRule, subject rbacv1.Subject) error {
	role := &rbacv1.ClusterRole{}
	switch err := c.Get(ctx, client.ObjectKey{Name: name}, role); {
	case apierrors.IsNotFound(err):
		if err := c.Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules}); err != nil {
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
	switch err := c.Get(ctx, client.ObjectKey{Name: name}, binding); {
	case apierrors.IsNotFound(err):
		return c.Create(ctx, &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
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
