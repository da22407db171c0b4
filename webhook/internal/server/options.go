// Package server assembles the rebac-authz-webhook: options (flags,
// validation, completion), then the cluster registry fed by the provider
// kit, the decider and the HTTPS server of /authz.
package server

import (
	"errors"
	"flag"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/meshplane/meshplane/providers/endpointslice"
	"github.com/meshplane/meshplane/webhook/internal/invites"
)

// Options are the webhook's flags.
type Options struct {
	BindAddress        string
	SecurePort         int
	TLSCertFile        string
	TLSPrivateKeyFile  string
	ClientCAFile       string
	MetricsBindAddress string

	OpenFGAURL     string
	OpenFGATimeout time.Duration
	// OpenFGAKeyFile, when set, holds OpenFGA's preshared API key.
	OpenFGAKeyFile string

	Kubeconfig, Context string
	Workspace           string
	EndpointSlice       string

	// InviteEmailExtraKey is the user extra holding a verified e-mail
	// address ("" turns acceptance of invitations by e-mail off).
	InviteEmailExtraKey string

	DecisionCacheTTL time.Duration
	ModelRefresh     time.Duration
	NewClusterGrace  time.Duration
	DiscoveryTTL     time.Duration
}

// NewOptions returns the defaults.
func NewOptions() *Options {
	return &Options{
		BindAddress:         "127.0.0.1",
		SecurePort:          9443,
		MetricsBindAddress:  "127.0.0.1:8080",
		OpenFGATimeout:      2 * time.Second,
		OpenFGAKeyFile:      os.Getenv("OPENFGA_PRESHARED_KEY_FILE"),
		Kubeconfig:          os.Getenv("KUBECONFIG"),
		Workspace:           "root:platform-mesh-system",
		EndpointSlice:       "core.platform-mesh.io",
		InviteEmailExtraKey: invites.DefaultExtraKey,
		DecisionCacheTTL:    2 * time.Second,
		ModelRefresh:        2 * time.Second,
		NewClusterGrace:     10 * time.Second,
		DiscoveryTTL:        time.Minute,
	}
}

// AddFlags registers the flags.
func (o *Options) AddFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.BindAddress, "bind-address", o.BindAddress, "IP address to serve HTTPS on")
	fs.IntVar(&o.SecurePort, "secure-port", o.SecurePort, "port of /authz, /healthz and /readyz (HTTPS)")
	fs.StringVar(&o.TLSCertFile, "tls-cert-file", o.TLSCertFile, "PEM serving certificate (required)")
	fs.StringVar(&o.TLSPrivateKeyFile, "tls-private-key-file", o.TLSPrivateKeyFile, "PEM key of --tls-cert-file (required)")
	fs.StringVar(&o.ClientCAFile, "client-ca-file", o.ClientCAFile, "if set, /authz require a client certificate signed by this CA (the core's)")
	fs.StringVar(&o.MetricsBindAddress, "metrics-bind-address", o.MetricsBindAddress, "address of /metrics over HTTP (0 turns it off)")
	fs.StringVar(&o.OpenFGAURL, "openfga-url", o.OpenFGAURL, "OpenFGA's HTTP API, e.g. http://127.0.0.1:8080 (required)")
	fs.DurationVar(&o.OpenFGATimeout, "openfga-timeout", o.OpenFGATimeout, "bound of one OpenFGA call")
	fs.StringVar(&o.OpenFGAKeyFile, "openfga-preshared-key-file", o.OpenFGAKeyFile,
		"file (mode 0600) holding OpenFGA's preshared API key, sent as the bearer token of every call (default $OPENFGA_PRESHARED_KEY_FILE); empty: none")
	fs.StringVar(&o.Kubeconfig, "kubeconfig", o.Kubeconfig, "kubeconfig of the webhook's credential on the core (default $KUBECONFIG)")
	fs.StringVar(&o.Context, "context", o.Context, "context in --kubeconfig (default: its current context)")
	fs.StringVar(&o.Workspace, "workspace", o.Workspace, "path of the workspace that exports core.platform-mesh.io")
	fs.StringVar(&o.EndpointSlice, "kcp-api-export-endpoint-slice-name", o.EndpointSlice, "the APIExportEndpointSlice the account workspaces are learnt from")
	fs.StringVar(&o.InviteEmailExtraKey, "invite-email-extra-key", o.InviteEmailExtraKey,
		"user extra into which the core's --authentication-config maps a verified e-mail claim: an Invite by that address is accepted on the invitee's first request into its workspace (empty: invitations by e-mail are never accepted)")
	fs.DurationVar(&o.DecisionCacheTTL, "decision-cache-ttl", o.DecisionCacheTTL, "how long an OpenFGA answer is reused (0: never); a revoked grant works at most this long here")
	fs.DurationVar(&o.ModelRefresh, "model-refresh-interval", o.ModelRefresh, "how often a store's current authorization model is read again")
	fs.DurationVar(&o.NewClusterGrace, "new-cluster-grace", o.NewClusterGrace, "how long a workspace whose store is not known yet is answered with 503 + Retry-After")
	fs.DurationVar(&o.DiscoveryTTL, "discovery-ttl", o.DiscoveryTTL, "how long a workspace's discovery of a non-built-in group is kept")
}

// Validate reports every bad flag at once.
func (o *Options) Validate() error {
	var errs []error
	if net.ParseIP(o.BindAddress) == nil {
		errs = append(errs, fmt.Errorf("--bind-address %q is not an IP address", o.BindAddress))
	}
	if o.SecurePort < 1 || o.SecurePort > 65535 {
		errs = append(errs, fmt.Errorf("--secure-port %d is not a port", o.SecurePort))
	}
	if o.TLSCertFile == "" || o.TLSPrivateKeyFile == "" {
		errs = append(errs, errors.New("--tls-cert-file and --tls-private-key-file are required (the apiserver only calls webhooks over HTTPS)"))
	}
	if u, err := url.Parse(o.OpenFGAURL); o.OpenFGAURL == "" || err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		errs = append(errs, fmt.Errorf("--openfga-url %q: want http(s)://host:port", o.OpenFGAURL))
	}
	if o.Workspace == "" || strings.ContainsAny(o.Workspace, "/ ") {
		errs = append(errs, fmt.Errorf("--workspace %q is not a workspace path", o.Workspace))
	}
	if o.EndpointSlice == "" {
		errs = append(errs, errors.New("--kcp-api-export-endpoint-slice-name is required"))
	}
	for name, d := range map[string]time.Duration{"--decision-cache-ttl": o.DecisionCacheTTL, "--model-refresh-interval": o.ModelRefresh,
		"--new-cluster-grace": o.NewClusterGrace, "--discovery-ttl": o.DiscoveryTTL} {
		if d < 0 {
			errs = append(errs, fmt.Errorf("%s must not be negative", name))
		}
	}
	if o.OpenFGATimeout <= 0 {
		errs = append(errs, errors.New("--openfga-timeout must be positive"))
	}
	for name, f := range map[string]string{"--tls-cert-file": o.TLSCertFile, "--tls-private-key-file": o.TLSPrivateKeyFile, "--client-ca-file": o.ClientCAFile} {
		if f == "" {
			continue
		}
		if _, err := os.Stat(f); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
		}
	}
	return errors.Join(errs...)
}

// Completed are validated options with the loaded configs.
type Completed struct {
	*Options
	// Base is the core's base URL with the webhook's credential;
	// Provider points at --workspace.
	Base, Provider *rest.Config
}

// Complete validates and loads the kubeconfig.
func (o *Options) Complete() (*Completed, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		&clientcmd.ClientConfigLoadingRules{ExplicitPath: o.Kubeconfig},
		&clientcmd.ConfigOverrides{CurrentContext: o.Context}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("loading kubeconfig %q: %w", o.Kubeconfig, err)
	}
	cfg.UserAgent = "rebac-authz-webhook"
	cfg.QPS, cfg.Burst = 50, 100
	cfg.Host = endpointslice.BaseHost(cfg.Host)
	provider := rest.CopyConfig(cfg)
	provider.Host = cfg.Host + "/clusters/" + o.Workspace
	return &Completed{Options: o, Base: cfg, Provider: provider}, nil
}
