// Package options holds the flags of `meshplane start`, named as kcp names
// them, and turns them into a validated, completed set.
package options

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/pflag"
	cliflag "k8s.io/component-base/cli/flag"
)

// Options are the flags of `meshplane start`.
type Options struct {
	RootDirectory          string
	BindAddress            string
	SecurePort             int
	EmbeddedEtcdClientPort int
	EmbeddedEtcdPeerPort   int
	EtcdServers            []string
	ExternalHostname       string
	TokenAuthFile          string
	ClientCAFile           string
	// AuthenticationConfig is kube-apiserver's structured authentication
	// configuration file (JWT issuers), reloaded when it changes.
	AuthenticationConfig string
	// KubeconfigPath is where the admin kubeconfig is written (default
	// <root-directory>/admin.kubeconfig).
	KubeconfigPath string
	// EmbeddedEtcdWALSizeBytes is the size of the embedded etcd's WAL
	// segment files (etcd's default when 0).
	EmbeddedEtcdWALSizeBytes int64
	// FeatureGates are Kubernetes feature gates (key=value,...); gates
	// Meshplane does not know, such as kcp's own, are ignored with a warning.
	FeatureGates map[string]bool
	// MountCAFiles are PEM bundles trusted for mount servers' certificates
	// besides the system's roots and the server's own CA (re-read when they
	// change).
	MountCAFiles []string
	// AuditLogPath is where the audit log (JSON, Metadata level) goes.
	AuditLogPath string
	// ServiceAccountSigningKeyFile signs service-account tokens (default
	// <root-directory>/service-account.key, generated on first start).
	ServiceAccountSigningKeyFile string
	// ServiceAccountKeyFiles verify service-account tokens besides the
	// signing key (older keys while rotating).
	ServiceAccountKeyFiles []string
	// ServiceAccountIssuers: the first is the "iss" of new tokens; all are
	// accepted. The API audiences are the first issuer.
	ServiceAccountIssuers []string
	// AuthorizationWebhookConfigFile is a kubeconfig naming the
	// authorization webhook, asked after RBAC (kube's and kcp's flag).
	AuthorizationWebhookConfigFile string
	// AuthorizationWebhookVersion is the SubjectAccessReview version sent
	// to the webhook: v1 or v1beta1.
	AuthorizationWebhookVersion string
	// AuthorizationWebhookCacheAuthorizedTTL and ...UnauthorizedTTL are how
	// long the webhook's allowed and not-allowed answers are cached.
	AuthorizationWebhookCacheAuthorizedTTL   time.Duration
	AuthorizationWebhookCacheUnauthorizedTTL time.Duration
	// AuthorizationWebhookRulesPath, when set, is the path on the
	// webhook's server that lists a user's rules for
	// SelfSubjectRulesReviews (a Meshplane extension).
	AuthorizationWebhookRulesPath string
}

// DefaultServiceAccountIssuer is the issuer of service-account tokens when
// --service-account-issuer is not given (kube-apiserver's usual value).
const DefaultServiceAccountIssuer = "https://kubernetes.default.svc"

// New returns options with kcp's defaults.
func New() *Options {
	return &Options{
		RootDirectory:          ".meshplane",
		BindAddress:            "127.0.0.1",
		SecurePort:             6443,
		EmbeddedEtcdClientPort: 2379,
		EmbeddedEtcdPeerPort:   2380,
		ServiceAccountIssuers:  []string{DefaultServiceAccountIssuer},
		// kube-apiserver's defaults.
		AuthorizationWebhookVersion:              "v1beta1",
		AuthorizationWebhookCacheAuthorizedTTL:   5 * time.Minute,
		AuthorizationWebhookCacheUnauthorizedTTL: 30 * time.Second,
	}
}

// AddFlags registers the flags on fs.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.RootDirectory, "root-directory", o.RootDirectory, "Directory for the server's state: certificates, admin.kubeconfig and the embedded etcd's data.")
	fs.StringVar(&o.BindAddress, "bind-address", o.BindAddress, "IP address to serve on.")
	fs.IntVar(&o.SecurePort, "secure-port", o.SecurePort, "Port to serve HTTPS on.")
	fs.IntVar(&o.EmbeddedEtcdClientPort, "embedded-etcd-client-port", o.EmbeddedEtcdClientPort, "Client port of the embedded etcd.")
	fs.IntVar(&o.EmbeddedEtcdPeerPort, "embedded-etcd-peer-port", o.EmbeddedEtcdPeerPort, "Peer port of the embedded etcd.")
	fs.StringSliceVar(&o.EtcdServers, "etcd-servers", o.EtcdServers, "External etcd endpoints to use instead of the embedded etcd (comma separated).")
	fs.StringVar(&o.ExternalHostname, "external-hostname", o.ExternalHostname, "Host name (and optional port) clients reach the server at; used in URLs the server hands out. Defaults to the bind address and secure port.")
	fs.StringVar(&o.TokenAuthFile, "token-auth-file", o.TokenAuthFile, "CSV file of static bearer tokens: token,user,uid,\"group1,group2\".")
	fs.StringVar(&o.AuthenticationConfig, "authentication-config", o.AuthenticationConfig,
		"File with an AuthenticationConfiguration (apiserver.config.k8s.io v1, v1beta1 or v1alpha1): JWT issuers (OIDC) whose tokens authenticate users, as kube-apiserver's flag; reloaded when the file changes.")
	fs.StringVar(&o.ClientCAFile, "client-ca-file", o.ClientCAFile, "CA bundle that signs accepted x509 client certificates (CN = user, O = groups).")
	fs.StringVar(&o.KubeconfigPath, "kubeconfig-path", o.KubeconfigPath, "Where to write the admin kubeconfig (default <root-directory>/admin.kubeconfig).")
	fs.Int64Var(&o.EmbeddedEtcdWALSizeBytes, "embedded-etcd-wal-size-bytes", o.EmbeddedEtcdWALSizeBytes, "Size of the embedded etcd's WAL segment files (0: etcd's default of 64 MB).")
	fs.Var(cliflag.NewMapStringBool(&o.FeatureGates), "feature-gates", "Kubernetes feature gates, key=value pairs separated by commas; unknown gates (such as kcp's) are ignored with a warning.")
	fs.StringSliceVar(&o.MountCAFiles, "mount-ca-file", o.MountCAFiles, "PEM bundles trusted for the certificates of mount servers (a mounted workspace's status.URL), besides the system's roots and the server's CA; re-read when they change.")
	fs.StringVar(&o.AuditLogPath, "audit-log-path", o.AuditLogPath, "Write an audit log (one JSON audit.k8s.io/v1 event per request, Metadata level) to this file.")
	fs.StringVar(&o.ServiceAccountSigningKeyFile, "service-account-signing-key-file", o.ServiceAccountSigningKeyFile,
		"PEM private key (RSA or ECDSA P-256) that signs service-account tokens (default <root-directory>/service-account.key, generated on first start).")
	fs.StringArrayVar(&o.ServiceAccountKeyFiles, "service-account-key-file", o.ServiceAccountKeyFiles,
		"PEM file of public (or private) keys that verify service-account tokens, besides the signing key; may be repeated.")
	fs.StringArrayVar(&o.ServiceAccountIssuers, "service-account-issuer", o.ServiceAccountIssuers,
		"Issuer (\"iss\") of service-account tokens; may be repeated: the first signs new tokens, all are accepted.")
	fs.StringVar(&o.AuthorizationWebhookConfigFile, "authorization-webhook-config-file", o.AuthorizationWebhookConfigFile,
		"Kubeconfig file naming an authorization webhook (SubjectAccessReviews over HTTPS), asked after system groups and RBAC; the logical cluster is in spec.extra[\"authorization.kcp.io/cluster-name\"]. When it cannot answer, the request is denied.")
	fs.StringVar(&o.AuthorizationWebhookVersion, "authorization-webhook-version", o.AuthorizationWebhookVersion,
		"Version of the SubjectAccessReviews sent to the authorization webhook: v1 or v1beta1.")
	fs.DurationVar(&o.AuthorizationWebhookCacheAuthorizedTTL, "authorization-webhook-cache-authorized-ttl", o.AuthorizationWebhookCacheAuthorizedTTL,
		"How long to cache an allowed answer of the authorization webhook.")
	fs.DurationVar(&o.AuthorizationWebhookCacheUnauthorizedTTL, "authorization-webhook-cache-unauthorized-ttl", o.AuthorizationWebhookCacheUnauthorizedTTL,
		"How long to cache a not-allowed answer of the authorization webhook.")
	fs.StringVar(&o.AuthorizationWebhookRulesPath, "authorization-webhook-rules-path", o.AuthorizationWebhookRulesPath,
		"Path on the authorization webhook's server (e.g. /rules) that lists a user's rules; SelfSubjectRulesReviews then show them besides RBAC's. Empty: RBAC's rules only.")
}

// Validate reports every bad flag at once.
func (o *Options) Validate() []error {
	var errs []error
	if o.RootDirectory == "" {
		errs = append(errs, fmt.Errorf("--root-directory must not be empty"))
	}
	if net.ParseIP(o.BindAddress) == nil {
		errs = append(errs, fmt.Errorf("--bind-address %q is not an IP address", o.BindAddress))
	}
	for name, p := range map[string]int{
		"--secure-port": o.SecurePort, "--embedded-etcd-client-port": o.EmbeddedEtcdClientPort,
		"--embedded-etcd-peer-port": o.EmbeddedEtcdPeerPort,
	} {
		if p < 1 || p > 65535 {
			errs = append(errs, fmt.Errorf("%s %d is not a port (1-65535)", name, p))
		}
	}
	if o.EmbeddedEtcdWALSizeBytes < 0 {
		errs = append(errs, fmt.Errorf("--embedded-etcd-wal-size-bytes must not be negative"))
	}
	if len(o.EtcdServers) == 0 && o.EmbeddedEtcdClientPort == o.EmbeddedEtcdPeerPort {
		errs = append(errs, fmt.Errorf("--embedded-etcd-client-port and --embedded-etcd-peer-port must differ"))
	}
	if len(o.ServiceAccountIssuers) == 0 || o.ServiceAccountIssuers[0] == "" {
		errs = append(errs, fmt.Errorf("--service-account-issuer must not be empty"))
	}
	for _, f := range o.ServiceAccountKeyFiles {
		if _, err := os.Stat(f); err != nil {
			errs = append(errs, fmt.Errorf("--service-account-key-file: %w", err))
		}
	}
	switch o.AuthorizationWebhookVersion {
	case "v1", "v1beta1":
	default:
		errs = append(errs, fmt.Errorf("--authorization-webhook-version %q: want v1 or v1beta1", o.AuthorizationWebhookVersion))
	}
	if o.AuthorizationWebhookRulesPath != "" && (o.AuthorizationWebhookConfigFile == "" || o.AuthorizationWebhookRulesPath[0] != '/') {
		errs = append(errs, fmt.Errorf("--authorization-webhook-rules-path %q: want an absolute path, with --authorization-webhook-config-file", o.AuthorizationWebhookRulesPath))
	}
	if o.AuthorizationWebhookCacheAuthorizedTTL < 0 || o.AuthorizationWebhookCacheUnauthorizedTTL < 0 {
		errs = append(errs, fmt.Errorf("--authorization-webhook-cache-authorized-ttl and --authorization-webhook-cache-unauthorized-ttl must not be negative"))
	}
	for name, f := range map[string]string{"--token-auth-file": o.TokenAuthFile, "--client-ca-file": o.ClientCAFile,
		"--authentication-config":             o.AuthenticationConfig,
		"--authorization-webhook-config-file": o.AuthorizationWebhookConfigFile,
		"--service-account-signing-key-file":  o.ServiceAccountSigningKeyFile} {
		if f == "" {
			continue
		}
		if _, err := os.Stat(f); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
		}
	}
	return errs
}

// Completed are options with defaults filled in.
type Completed struct {
	*Options
	// ExternalAddress is host:port clients use.
	ExternalAddress string
}

// Complete fills in defaults and absolute paths.
func (o *Options) Complete() (*Completed, error) {
	abs, err := filepath.Abs(o.RootDirectory)
	if err != nil {
		return nil, err
	}
	c := *o
	c.RootDirectory = abs
	if c.KubeconfigPath == "" {
		c.KubeconfigPath = filepath.Join(abs, "admin.kubeconfig")
	} else if c.KubeconfigPath, err = filepath.Abs(c.KubeconfigPath); err != nil {
		return nil, err
	}
	if c.ServiceAccountSigningKeyFile == "" {
		c.ServiceAccountSigningKeyFile = filepath.Join(abs, "service-account.key")
	}
	ext := o.ExternalHostname
	if ext == "" {
		ext = o.BindAddress
		if ext == "0.0.0.0" || ext == "::" {
			ext = "127.0.0.1"
		}
	}
	if _, _, err := net.SplitHostPort(ext); err != nil {
		ext = net.JoinHostPort(ext, fmt.Sprint(o.SecurePort))
	}
	return &Completed{Options: &c, ExternalAddress: ext}, nil
}
