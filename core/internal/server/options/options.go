// Package options holds the flags of `meshplane start`, named as kcp names
// them, and turns them into a validated, completed set.
package options

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
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
	// EtcdCAFile, EtcdCertFile and EtcdKeyFile: TLS to the external etcd
	// (kube-apiserver's flag names).
	EtcdCAFile, EtcdCertFile, EtcdKeyFile string
	ExternalHostname                      string
	TokenAuthFile                         string
	ClientCAFile                          string
	// TLSCertFile and TLSPrivateKeyFile are the serving certificate and key
	// (kcp's and kube-apiserver's flags), re-read when they change; empty:
	// <root-directory>/apiserver.crt and .key, made on first start.
	TLSCertFile, TLSPrivateKeyFile string
	// AuthenticationConfig is kube-apiserver's structured authentication
	// configuration file (JWT issuers), reloaded when it changes.
	AuthenticationConfig string
	// ShardName names this shard ("root": the shard holding root).
	ShardName string
	// RootShardKubeconfig reaches the root shard from another shard
	// (its credentials are used on every shard).
	RootShardKubeconfig string
	// ReplicaSource is where a shard reads the other shards' objects:
	// "shards" (a replica of each, one watch per kind and shard) or
	// "cache" (the cache server, one watch per kind).
	ReplicaSource string
	// CacheServerKubeconfig reaches the cache server (default: the root
	// shard's, which embeds one, at /services/cache).
	CacheServerKubeconfig string
	// ShardBaseURL is the shard's own URL (default: the external
	// address); ShardExternalURL is the URL clients use for workspaces on
	// it, a front proxy's (default: ShardBaseURL).
	ShardBaseURL, ShardExternalURL string
	// RequestHeaderClientCAFile and RequestHeaderAllowedNames: the front
	// proxy whose identity headers are believed (kube's flag names).
	RequestHeaderClientCAFile string
	RequestHeaderAllowedNames []string
	// KubeconfigPath is where the admin kubeconfig is written (default
	// <root-directory>/admin.kubeconfig).
	KubeconfigPath string
	// EmbeddedEtcdWALSizeBytes is the size of the embedded etcd's WAL
	// segment files (etcd's default when 0).
	EmbeddedEtcdWALSizeBytes int64
	// EmbeddedEtcdInProcessClient sends reads, writes and watches to the embedded
	// etcd through function calls instead of gRPC over loopback.
	EmbeddedEtcdInProcessClient bool
	// FeatureGates are Kubernetes feature gates (key=value,...); gates
	// Meshplane does not know, such as kcp's own, are ignored with a warning.
	FeatureGates map[string]bool
	// MountCAFiles are PEM bundles trusted for mount servers' certificates
	// besides the system's roots and the server's own CA (re-read when they
	// change).
	MountCAFiles []string
	// MountAllowedHosts are where mount servers may be (addresses, CIDRs,
	// host names, each with an optional port); empty: nowhere.
	MountAllowedHosts []string
	// MountReservedAddresses are listening addresses of the platform
	// (ip:port or ip:first-last) mounts may not reach besides the
	// server's own, unless MountAllowedHosts names one with its port.
	MountReservedAddresses []string
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
	// ServiceAccountMaxTokenExpiration is the longest lifetime of a token
	// minted by TokenRequest; longer requests are shortened to it (0: kube's
	// 2^32 seconds).
	ServiceAccountMaxTokenExpiration time.Duration
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
	// AuthorizationWebhookTimeout bounds one call to the webhook; after a
	// failure the core denies without asking until a probe finds it back.
	AuthorizationWebhookTimeout time.Duration
	// AuthorizationWebhookRulesPath, when set, is the path on the
	// webhook's server that lists a user's rules for
	// SelfSubjectRulesReviews (a Meshplane extension).
	AuthorizationWebhookRulesPath string
	// AuthorizationWebhookOrganizationsPath, when set, is the path on the
	// webhook's server that names the organizations a user has a role in,
	// for the "myorgs" virtual workspace (a Meshplane extension).
	AuthorizationWebhookOrganizationsPath string
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
		// Reads and writes skip loopback gRPC; see docs/benchmarks.md.
		EmbeddedEtcdInProcessClient: true,
		EmbeddedEtcdPeerPort:        2380,
		ServiceAccountIssuers:       []string{DefaultServiceAccountIssuer},
		// kube-apiserver's defaults.
		AuthorizationWebhookVersion:              "v1beta1",
		AuthorizationWebhookCacheAuthorizedTTL:   5 * time.Minute,
		AuthorizationWebhookCacheUnauthorizedTTL: 30 * time.Second,
		// Far above a healthy webhook's answer (milliseconds) and above
		// the rebac-authz-webhook's own OpenFGA timeout (2s, so that it
		// answers "no opinion" first), far below kube's 30s, which let a
		// hung webhook hold every request.
		AuthorizationWebhookTimeout: 3 * time.Second,
		ShardName:                   "root",
		ReplicaSource:               ReplicaSourceShards,
	}
}

// The values of --replica-source.
const (
	ReplicaSourceShards = "shards"
	ReplicaSourceCache  = "cache"
)

// AddFlags registers the flags on fs.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.RootDirectory, "root-directory", o.RootDirectory, "Directory for the server's state: certificates, admin.kubeconfig and the embedded etcd's data.")
	fs.StringVar(&o.BindAddress, "bind-address", o.BindAddress, "IP address to serve on.")
	fs.IntVar(&o.SecurePort, "secure-port", o.SecurePort, "Port to serve HTTPS on.")
	fs.IntVar(&o.EmbeddedEtcdClientPort, "embedded-etcd-client-port", o.EmbeddedEtcdClientPort, "Client port of the embedded etcd.")
	fs.IntVar(&o.EmbeddedEtcdPeerPort, "embedded-etcd-peer-port", o.EmbeddedEtcdPeerPort, "Peer port of the embedded etcd.")
	fs.StringSliceVar(&o.EtcdServers, "etcd-servers", o.EtcdServers, "External etcd endpoints to use instead of the embedded etcd (comma separated).")
	fs.StringVar(&o.EtcdCAFile, "etcd-cafile", o.EtcdCAFile, "CA bundle that signs the certificates of the --etcd-servers (https:// endpoints).")
	fs.StringVar(&o.EtcdCertFile, "etcd-certfile", o.EtcdCertFile, "Client certificate presented to the --etcd-servers.")
	fs.StringVar(&o.EtcdKeyFile, "etcd-keyfile", o.EtcdKeyFile, "Key of --etcd-certfile.")
	fs.StringVar(&o.ExternalHostname, "external-hostname", o.ExternalHostname, "Host name (and optional port) clients reach the server at; used in URLs the server hands out. Defaults to the bind address and secure port.")
	fs.StringVar(&o.TokenAuthFile, "token-auth-file", o.TokenAuthFile, "CSV file of static bearer tokens: token,user,uid,\"group1,group2\".")
	fs.StringVar(&o.AuthenticationConfig, "authentication-config", o.AuthenticationConfig,
		"File with an AuthenticationConfiguration (apiserver.config.k8s.io v1, v1beta1 or v1alpha1): JWT issuers (OIDC) whose tokens authenticate users, as kube-apiserver's flag; reloaded when the file changes.")
	fs.StringVar(&o.TLSCertFile, "tls-cert-file", o.TLSCertFile,
		"File with the serving certificate (PEM; intermediates after it), e.g. one cert-manager manages; re-read when it changes. Default <root-directory>/apiserver.crt, signed by the root directory's CA on first start.")
	fs.StringVar(&o.TLSPrivateKeyFile, "tls-private-key-file", o.TLSPrivateKeyFile, "File with the key of --tls-cert-file.")
	fs.StringVar(&o.ClientCAFile, "client-ca-file", o.ClientCAFile, "CA bundle that signs accepted x509 client certificates (CN = user, O = groups).")
	fs.StringVar(&o.ShardName, "shard-name", o.ShardName, "Name of this shard; a shard other than root needs --root-shard-kubeconfig and registers itself in root.")
	fs.StringVar(&o.RootShardKubeconfig, "root-shard-kubeconfig", o.RootShardKubeconfig,
		"Kubeconfig of the root shard (current context; system:masters), for a shard other than root. Its credentials and CA are used for every shard: shards of one install share them.")
	fs.StringVar(&o.ReplicaSource, "replica-source", o.ReplicaSource,
		"Where this shard reads what it needs of the other shards (exports, schemas, types, logical clusters, admission, export workspaces' RBAC): shards (a replica of each other shard) or cache (the cache server: one watch per kind whatever the number of shards).")
	fs.StringVar(&o.CacheServerKubeconfig, "cache-server-kubeconfig", o.CacheServerKubeconfig,
		"Kubeconfig of the cache server (system:masters; its server URL ends in /services/cache). Default: the cache server the root shard embeds, reached with --root-shard-kubeconfig (or in process on the root shard).")
	fs.StringVar(&o.ShardBaseURL, "shard-base-url", o.ShardBaseURL, "URL other shards and the front proxy reach this shard at (default https://<external address>).")
	fs.StringVar(&o.ShardExternalURL, "shard-external-url", o.ShardExternalURL, "URL clients reach workspaces of this shard at, usually the front proxy's; used in Workspace URLs (default --shard-base-url).")
	fs.StringVar(&o.RequestHeaderClientCAFile, "requestheader-client-ca-file", o.RequestHeaderClientCAFile,
		"CA bundle that signs the client certificate of a front proxy; requests made with such a certificate are authenticated as the user in their X-Remote-User, X-Remote-Uid, X-Remote-Group and X-Remote-Extra-* headers.")
	fs.StringSliceVar(&o.RequestHeaderAllowedNames, "requestheader-allowed-names", o.RequestHeaderAllowedNames,
		"Common names accepted from certificates signed by --requestheader-client-ca-file (empty: any).")
	fs.StringVar(&o.KubeconfigPath, "kubeconfig-path", o.KubeconfigPath, "Where to write the admin kubeconfig (default <root-directory>/admin.kubeconfig).")
	fs.BoolVar(&o.EmbeddedEtcdInProcessClient, "embedded-etcd-in-process-client", o.EmbeddedEtcdInProcessClient, "Send reads, writes and watches to the embedded etcd as function calls instead of gRPC over loopback; false: everything over gRPC.")
	fs.Int64Var(&o.EmbeddedEtcdWALSizeBytes, "embedded-etcd-wal-size-bytes", o.EmbeddedEtcdWALSizeBytes, "Size of the embedded etcd's WAL segment files (0: etcd's default of 64 MB).")
	fs.Var(cliflag.NewMapStringBool(&o.FeatureGates), "feature-gates", "Kubernetes feature gates, key=value pairs separated by commas; unknown gates (such as kcp's) are ignored with a warning.")
	fs.StringSliceVar(&o.MountCAFiles, "mount-ca-file", o.MountCAFiles, "PEM bundles trusted for the certificates of mount servers (a mounted workspace's status.URL), besides the system's roots and the server's CA; re-read when they change.")
	fs.StringSliceVar(&o.MountAllowedHosts, "mount-allowed-hosts", o.MountAllowedHosts,
		"Where mount servers (a mounted workspace's status.URL) may be, comma separated: IP addresses, CIDRs, host names or *.domain, each with an optional :port (IPv6 as [addr]:port). Checked on the address connected to. Loopback, link-local and the server's own ports are refused unless named explicitly (127.0.0.1:9443, not 0.0.0.0/0 or a host name). Empty: mounts reach nothing.")
	fs.StringSliceVar(&o.MountReservedAddresses, "mount-reserved-addresses", o.MountReservedAddresses,
		"The platform's other listening addresses, ip:port or ip:first-last, comma separated: refused to mounts like the server's own ports, even under a --mount-allowed-hosts range (the launcher passes its port range).")
	fs.StringVar(&o.AuditLogPath, "audit-log-path", o.AuditLogPath, "Write an audit log (one JSON audit.k8s.io/v1 event per request, Metadata level) to this file.")
	fs.StringVar(&o.ServiceAccountSigningKeyFile, "service-account-signing-key-file", o.ServiceAccountSigningKeyFile,
		"PEM private key (RSA or ECDSA P-256) that signs service-account tokens (default <root-directory>/service-account.key, generated on first start).")
	fs.StringArrayVar(&o.ServiceAccountKeyFiles, "service-account-key-file", o.ServiceAccountKeyFiles,
		"PEM file of public (or private) keys that verify service-account tokens, besides the signing key; may be repeated.")
	fs.StringArrayVar(&o.ServiceAccountIssuers, "service-account-issuer", o.ServiceAccountIssuers,
		"Issuer (\"iss\") of service-account tokens; may be repeated: the first signs new tokens, all are accepted.")
	fs.DurationVar(&o.ServiceAccountMaxTokenExpiration, "service-account-max-token-expiration", o.ServiceAccountMaxTokenExpiration,
		"The longest lifetime of a token minted by TokenRequest (kubectl create token); a request for longer gets a token for this long, with a warning. Between 1h and 2^32 seconds; 0: no maximum but kube's 2^32 seconds.")
	fs.StringVar(&o.AuthorizationWebhookConfigFile, "authorization-webhook-config-file", o.AuthorizationWebhookConfigFile,
		"Kubeconfig file naming an authorization webhook (SubjectAccessReviews over HTTPS), asked after system groups and RBAC; the logical cluster is in spec.extra[\"authorization.kcp.io/cluster-name\"]. When it cannot answer, the request is denied.")
	fs.StringVar(&o.AuthorizationWebhookVersion, "authorization-webhook-version", o.AuthorizationWebhookVersion,
		"Version of the SubjectAccessReviews sent to the authorization webhook: v1 or v1beta1.")
	fs.DurationVar(&o.AuthorizationWebhookCacheAuthorizedTTL, "authorization-webhook-cache-authorized-ttl", o.AuthorizationWebhookCacheAuthorizedTTL,
		"How long to cache an allowed answer of the authorization webhook.")
	fs.DurationVar(&o.AuthorizationWebhookCacheUnauthorizedTTL, "authorization-webhook-cache-unauthorized-ttl", o.AuthorizationWebhookCacheUnauthorizedTTL,
		"How long to cache a not-allowed answer of the authorization webhook.")
	fs.DurationVar(&o.AuthorizationWebhookTimeout, "authorization-webhook-timeout", o.AuthorizationWebhookTimeout,
		"How long one call to the authorization webhook may take (kube's default is 30s). When it fails (times out, is refused, answers 5xx) the core denies what RBAC does not allow at once, without asking it, until a probe after a back-off (1s, doubling up to 10s) finds it answering again.")
	fs.StringVar(&o.AuthorizationWebhookRulesPath, "authorization-webhook-rules-path", o.AuthorizationWebhookRulesPath,
		"Path on the authorization webhook's server (e.g. /rules) that lists a user's rules; SelfSubjectRulesReviews then show them besides RBAC's. Empty: RBAC's rules only.")
	fs.StringVar(&o.AuthorizationWebhookOrganizationsPath, "authorization-webhook-organizations-path", o.AuthorizationWebhookOrganizationsPath,
		"Path on the authorization webhook's server (e.g. /organizations) that names the organizations a user has a role in; it turns on the virtual workspace /services/myorgs/clusters/root:orgs. Empty: off.")
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
	if (o.EtcdCAFile != "" || o.EtcdCertFile != "" || o.EtcdKeyFile != "") && len(o.EtcdServers) == 0 {
		errs = append(errs, fmt.Errorf("--etcd-cafile, --etcd-certfile and --etcd-keyfile are for --etcd-servers"))
	}
	if (o.EtcdCertFile == "") != (o.EtcdKeyFile == "") {
		errs = append(errs, fmt.Errorf("--etcd-certfile and --etcd-keyfile go together"))
	}
	if (o.TLSCertFile == "") != (o.TLSPrivateKeyFile == "") {
		errs = append(errs, fmt.Errorf("--tls-cert-file and --tls-private-key-file go together"))
	}
	if o.ShardName == "" {
		errs = append(errs, fmt.Errorf("--shard-name must not be empty"))
	}
	if o.ShardName != "" && o.ShardName != "root" && o.RootShardKubeconfig == "" {
		errs = append(errs, fmt.Errorf("--shard-name %s needs --root-shard-kubeconfig: a shard other than root registers itself there", o.ShardName))
	}
	if o.ReplicaSource != ReplicaSourceShards && o.ReplicaSource != ReplicaSourceCache {
		errs = append(errs, fmt.Errorf("--replica-source %q: want %s or %s", o.ReplicaSource, ReplicaSourceShards, ReplicaSourceCache))
	}
	if o.CacheServerKubeconfig != "" && o.ReplicaSource != ReplicaSourceCache {
		errs = append(errs, fmt.Errorf("--cache-server-kubeconfig goes with --replica-source=%s", ReplicaSourceCache))
	}
	if o.ShardName == "root" && o.RootShardKubeconfig != "" {
		errs = append(errs, fmt.Errorf("--root-shard-kubeconfig is for shards other than root: give --shard-name"))
	}
	for name, u := range map[string]string{"--shard-base-url": o.ShardBaseURL, "--shard-external-url": o.ShardExternalURL} {
		if u == "" {
			continue
		}
		if parsed, err := url.Parse(u); err != nil || parsed.Scheme != "https" || parsed.Host == "" {
			errs = append(errs, fmt.Errorf("%s %q is not an https:// URL", name, u))
		}
	}
	if len(o.ServiceAccountIssuers) == 0 || o.ServiceAccountIssuers[0] == "" {
		errs = append(errs, fmt.Errorf("--service-account-issuer must not be empty"))
	}
	if m := o.ServiceAccountMaxTokenExpiration; m != 0 && (m < time.Hour || m > (1<<32)*time.Second) {
		errs = append(errs, fmt.Errorf("--service-account-max-token-expiration %s: want 0 or between 1h and 2^32 seconds", m))
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
	if o.AuthorizationWebhookOrganizationsPath != "" && (o.AuthorizationWebhookConfigFile == "" || o.AuthorizationWebhookOrganizationsPath[0] != '/') {
		errs = append(errs, fmt.Errorf("--authorization-webhook-organizations-path %q: want an absolute path, with --authorization-webhook-config-file", o.AuthorizationWebhookOrganizationsPath))
	}
	if o.AuthorizationWebhookTimeout <= 0 || o.AuthorizationWebhookTimeout > 30*time.Second {
		errs = append(errs, fmt.Errorf("--authorization-webhook-timeout %s: want more than 0 and at most 30s", o.AuthorizationWebhookTimeout))
	}
	if o.AuthorizationWebhookCacheAuthorizedTTL < 0 || o.AuthorizationWebhookCacheUnauthorizedTTL < 0 {
		errs = append(errs, fmt.Errorf("--authorization-webhook-cache-authorized-ttl and --authorization-webhook-cache-unauthorized-ttl must not be negative"))
	}
	for name, f := range map[string]string{"--token-auth-file": o.TokenAuthFile, "--client-ca-file": o.ClientCAFile,
		"--authentication-config":             o.AuthenticationConfig,
		"--authorization-webhook-config-file": o.AuthorizationWebhookConfigFile,
		"--root-shard-kubeconfig":             o.RootShardKubeconfig,
		"--cache-server-kubeconfig":           o.CacheServerKubeconfig,
		"--requestheader-client-ca-file":      o.RequestHeaderClientCAFile,
		"--service-account-signing-key-file":  o.ServiceAccountSigningKeyFile,
		"--tls-cert-file":                     o.TLSCertFile,
		"--tls-private-key-file":              o.TLSPrivateKeyFile} {
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
	if c.ShardBaseURL == "" {
		c.ShardBaseURL = "https://" + ext
	}
	c.ShardBaseURL = strings.TrimSuffix(c.ShardBaseURL, "/")
	if c.ShardExternalURL == "" {
		c.ShardExternalURL = c.ShardBaseURL
	}
	c.ShardExternalURL = strings.TrimSuffix(c.ShardExternalURL, "/")
	for _, f := range []*string{&c.RootShardKubeconfig, &c.CacheServerKubeconfig, &c.TLSCertFile, &c.TLSPrivateKeyFile} {
		if *f == "" {
			continue
		}
		if *f, err = filepath.Abs(*f); err != nil {
			return nil, err
		}
	}
	return &Completed{Options: &c, ExternalAddress: ext}, nil
}
