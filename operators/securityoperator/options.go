// Package securityoperator assembles the security-operator: options
// (flags, validation, completion), then the multicluster manager on the
// provider kit with the Store controller, and the initializer and
// terminator of the WorkspaceType "security".
package securityoperator

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
)

// Options are the operator's flags.
type Options struct {
	Kubeconfig, Context string
	// Workspace is the provider workspace holding the export and its slice.
	Workspace     string
	EndpointSlice string
	// OpenFGAURL is OpenFGA's HTTP API.
	OpenFGAURL string
	// OpenFGAGRPC, when set, is OpenFGA's gRPC API (host:port, plaintext):
	// tuple writes go there.
	OpenFGAGRPC string
	// OpenFGAKeyFile, when set, holds the preshared API key sent to
	// OpenFGA with every call.
	OpenFGAKeyFile string
	// WorkspaceType is the lifecycle type, "<path>:<name>" (root:security).
	WorkspaceType string
	MetricsAddr   string
	HealthAddr    string
	Workers       int
	WaitForURL    time.Duration
	// LifecycleKubeconfig and LifecycleContext, when set, are the
	// credential for the WorkspaceType and its lifecycle virtual
	// workspaces (default: --kubeconfig).
	LifecycleKubeconfig, LifecycleContext string
	// APIChangesKubeconfig and APIChangesContext, when set, are a
	// credential that may watch APIBindings and CRDs across all workspaces
	// (system:masters): an organization's bound resources are then
	// discovered again when they change rather than at every look.
	APIChangesKubeconfig, APIChangesContext string
	// FrontProxyKubeconfig and FrontProxyContext, when set, reach every
	// shard's workspaces through the front proxy: an organization's
	// discovery and path lookups go there (a shard refuses clusters it
	// does not host).
	FrontProxyKubeconfig, FrontProxyContext string
	// Profiling serves Go's pprof under /debug/pprof/ on the metrics address.
	Profiling bool
	// OrgsWorkspace is where the platform keeps organizations' Accounts
	// and Stores (root:orgs): only Stores there become OpenFGA stores.
	OrgsWorkspace string
	// OrganizationStores is where organizations' tuples live in OpenFGA:
	// StoresPerOrganization (a store each) or StoresShared (one store,
	// docs/authorization.md, Scale).
	OrganizationStores string
}

// The values of --organization-stores.
const (
	StoresPerOrganization = "per-organization"
	StoresShared          = "shared"
)

// NewOptions returns the defaults.
func NewOptions() *Options {
	return &Options{
		Kubeconfig:    os.Getenv("KUBECONFIG"),
		Workspace:     "root:platform-mesh-system",
		EndpointSlice: "core.platform-mesh.io",
		OpenFGAURL:    os.Getenv("OPENFGA_URL"),
		OpenFGAGRPC:   os.Getenv("OPENFGA_GRPC_ADDR"),
		// The launcher's platform.env names it.
		OpenFGAKeyFile: os.Getenv("OPENFGA_PRESHARED_KEY_FILE"),
		WorkspaceType:  "root:security",
		MetricsAddr:    "127.0.0.1:8080",
		HealthAddr:     "127.0.0.1:8081",
		Workers:        4,
		WaitForURL:     5 * time.Minute,
		OrgsWorkspace:  "root:orgs",

		OrganizationStores: StoresPerOrganization,
	}
}

// AddFlags registers the flags.
func (o *Options) AddFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.Kubeconfig, "kubeconfig", o.Kubeconfig, "kubeconfig of the operator's credential (default $KUBECONFIG)")
	fs.StringVar(&o.Context, "context", o.Context, "context in --kubeconfig (default: its current context)")
	fs.StringVar(&o.Workspace, "workspace", o.Workspace, "path of the provider workspace that exports core.platform-mesh.io")
	fs.StringVar(&o.EndpointSlice, "kcp-api-export-endpoint-slice-name", o.EndpointSlice, "name of the APIExportEndpointSlice in --workspace")
	fs.StringVar(&o.OpenFGAURL, "openfga-url", o.OpenFGAURL, "OpenFGA's HTTP API, e.g. http://openfga:8080 (default $OPENFGA_URL)")
	fs.StringVar(&o.OpenFGAGRPC, "openfga-grpc-addr", o.OpenFGAGRPC,
		"OpenFGA's gRPC API, host:port without TLS (default $OPENFGA_GRPC_ADDR): tuple writes go there, sparing OpenFGA its HTTP gateway; empty: all over --openfga-url")
	fs.StringVar(&o.OpenFGAKeyFile, "openfga-preshared-key-file", o.OpenFGAKeyFile,
		"file (mode 0600) holding OpenFGA's preshared API key, sent as the bearer token of every HTTP and gRPC call (default $OPENFGA_PRESHARED_KEY_FILE); empty: none")
	fs.StringVar(&o.WorkspaceType, "workspace-type", o.WorkspaceType,
		"the WorkspaceType, <path>:<name>, whose initializer and terminator this operator is (org and account extend it)")
	fs.StringVar(&o.MetricsAddr, "metrics-bind-address", o.MetricsAddr, "address of /metrics (0 turns it off)")
	fs.StringVar(&o.HealthAddr, "health-probe-bind-address", o.HealthAddr, "address of /healthz and /readyz")
	fs.IntVar(&o.Workers, "workers", o.Workers, "Stores and workspaces handled in parallel")
	fs.StringVar(&o.LifecycleKubeconfig, "lifecycle-kubeconfig", o.LifecycleKubeconfig,
		"kubeconfig for reading --workspace-type and using its initializing and terminating virtual workspaces (default: --kubeconfig); "+
			"needed while the core accepts a ServiceAccount token only in the ServiceAccount's own workspace")
	fs.StringVar(&o.LifecycleContext, "lifecycle-context", o.LifecycleContext, "context in --lifecycle-kubeconfig")
	fs.StringVar(&o.FrontProxyKubeconfig, "front-proxy-kubeconfig", o.FrontProxyKubeconfig,
		"kubeconfig of the front proxy, with the --lifecycle-kubeconfig credential: organizations' discovery and path lookups go there, so workspaces on every shard are reached (default: the lifecycle kubeconfig's server)")
	fs.StringVar(&o.FrontProxyContext, "front-proxy-context", o.FrontProxyContext, "context in --front-proxy-kubeconfig")
	fs.StringVar(&o.APIChangesKubeconfig, "api-changes-kubeconfig", o.APIChangesKubeconfig,
		"kubeconfig of the root shard with a credential that may watch APIBindings and CRDs across all workspaces (system:masters), used on every Shard listed in root at its spec.baseURL; "+
			"when set, an organization's bound resources are discovered again when they change (and every 10 minutes), "+
			"else at every look at its Store (every 30 s)")
	fs.StringVar(&o.APIChangesContext, "api-changes-context", o.APIChangesContext, "context in --api-changes-kubeconfig")
	fs.StringVar(&o.OrgsWorkspace, "orgs-workspace", o.OrgsWorkspace,
		"the workspace holding organizations' Accounts and Stores; only Stores there become OpenFGA stores")
	fs.StringVar(&o.OrganizationStores, "organization-stores", o.OrganizationStores,
		"where organizations' tuples live in OpenFGA: per-organization (a store each) or shared (one store for all, "+
			"its model the union of theirs; an organization's AuthorizationModels are then left out)")
	fs.BoolVar(&o.Profiling, "profiling", o.Profiling, "serve Go's pprof profiles under /debug/pprof/ on --metrics-bind-address")
	fs.DurationVar(&o.WaitForURL, "wait-for-endpoint", o.WaitForURL, "how long to wait at start for the endpoint slice's and the workspace type's URLs")
}

// Validate checks the flags.
func (o *Options) Validate() error {
	var errs []error
	if o.EndpointSlice == "" {
		errs = append(errs, errors.New("--kcp-api-export-endpoint-slice-name is required"))
	}
	if o.Workspace == "" || strings.ContainsAny(o.Workspace, "/ ") {
		errs = append(errs, fmt.Errorf("--workspace %q is not a workspace path", o.Workspace))
	}
	if u, err := url.Parse(o.OpenFGAURL); o.OpenFGAURL == "" || err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		errs = append(errs, fmt.Errorf("--openfga-url %q must be OpenFGA's HTTP API URL (http[s]://host:port)", o.OpenFGAURL))
	}
	if o.OpenFGAGRPC != "" {
		if _, port, err := net.SplitHostPort(o.OpenFGAGRPC); err != nil || port == "" {
			errs = append(errs, fmt.Errorf("--openfga-grpc-addr %q must be host:port", o.OpenFGAGRPC))
		}
	}
	if i := strings.LastIndex(o.WorkspaceType, ":"); i <= 0 || i == len(o.WorkspaceType)-1 {
		errs = append(errs, fmt.Errorf("--workspace-type %q must be <workspace path>:<name>", o.WorkspaceType))
	}
	if i := strings.LastIndex(o.OrgsWorkspace, ":"); i <= 0 || i == len(o.OrgsWorkspace)-1 || strings.ContainsAny(o.OrgsWorkspace, "/ ") {
		errs = append(errs, fmt.Errorf("--orgs-workspace %q must be the path of a workspace below root", o.OrgsWorkspace))
	}
	switch o.OrganizationStores {
	case StoresPerOrganization:
	case StoresShared:
		if err := sharedUnsupported(); err != nil {
			errs = append(errs, err)
		}
	default:
		errs = append(errs, fmt.Errorf("--organization-stores %q must be %s or %s", o.OrganizationStores, StoresPerOrganization, StoresShared))
	}
	if o.Workers < 1 {
		errs = append(errs, errors.New("--workers must be at least 1"))
	}
	return errors.Join(errs...)
}

// Completed are validated options with the loaded configs.
type Completed struct {
	*Options
	// Provider points at the provider workspace, Base at the core's base URL.
	Provider, Base *rest.Config
	// Lifecycle is the core's base URL with the lifecycle credential.
	Lifecycle *rest.Config
	// Workspaces reaches any workspace by path or cluster: the front proxy
	// when there is one, else Lifecycle.
	Workspaces *rest.Config
	// APIChanges is the core's base URL with the --api-changes credential;
	// nil without one.
	APIChanges *rest.Config
	// TypePath and TypeName split --workspace-type.
	TypePath, TypeName string
}

// Complete loads the kubeconfig.
func (o *Options) Complete() (*Completed, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	base, err := loadBase(o.Kubeconfig, o.Context)
	if err != nil {
		return nil, err
	}
	lifecycle := base
	if o.LifecycleKubeconfig != "" {
		if lifecycle, err = loadBase(o.LifecycleKubeconfig, o.LifecycleContext); err != nil {
			return nil, err
		}
	}
	workspaces := lifecycle
	if o.FrontProxyKubeconfig != "" {
		if workspaces, err = loadBase(o.FrontProxyKubeconfig, o.FrontProxyContext); err != nil {
			return nil, err
		}
	}
	var changes *rest.Config
	if o.APIChangesKubeconfig != "" {
		if changes, err = loadBase(o.APIChangesKubeconfig, o.APIChangesContext); err != nil {
			return nil, err
		}
	}
	provider := rest.CopyConfig(base)
	provider.Host = base.Host + "/clusters/" + o.Workspace
	i := strings.LastIndex(o.WorkspaceType, ":")
	return &Completed{Options: o, Provider: provider, Base: base, Lifecycle: lifecycle, Workspaces: workspaces, APIChanges: changes,
		TypePath: o.WorkspaceType[:i], TypeName: o.WorkspaceType[i+1:]}, nil
}

// loadBase loads a kubeconfig context and points it at the core's base URL.
func loadBase(kubeconfig, context string) (*rest.Config, error) {
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		&clientcmd.ClientConfigLoadingRules{ExplicitPath: kubeconfig},
		&clientcmd.ConfigOverrides{CurrentContext: context}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("loading kubeconfig %q: %w", kubeconfig, err)
	}
	cfg.UserAgent = "security-operator"
	cfg.QPS, cfg.Burst = 50, 100
	cfg.Host = endpointslice.BaseHost(cfg.Host)
	return cfg, nil
}

// sharedUnsupported refuses --organization-stores=shared while a part of
// it is missing (docs/authorization.md, Scale: what is built).
func sharedUnsupported() error {
	return errors.New("--organization-stores=shared is not complete yet: the Store controller writes the shared store " +
		"(union model, organization-scoped Store tuples, deletion of an organization's tuples) and the rebac-authz-webhook's " +
		"decision cache is keyed by organization, but the account and RoleAssignment writers do not check fga.Scope, " +
		"organizations with AuthorizationModels get no store of their own, existing stores are not migrated and the " +
		"e2e is missing (docs/authorization.md, Scale); " +
		"use per-organization")
}
