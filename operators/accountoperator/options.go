// Package accountoperator assembles the account-operator: options (flags,
// validation, completion), then the multicluster manager on the provider
// kit with the Account and AccountInfo controllers.
package accountoperator

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
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
	OrgsPath      string
	BasePath      string
	MetricsAddr   string
	HealthAddr    string
	Workers       int
	WaitForURL    time.Duration
	// InitializerType is the WorkspaceType in Workspace whose initializer
	// the operator is: through its initializing virtual workspace it binds
	// an Account's creator to cluster-admin in the new workspace, then
	// removes the initializer.
	InitializerType string
	// QPS and Burst limit the operator's client.
	QPS   float32
	Burst int
	// Profiling serves Go's pprof under /debug/pprof/ on the metrics address.
	Profiling bool
	// SoftMemoryLimit, when set, is the Go runtime's soft memory limit
	// (as GOMEMLIMIT): the garbage collector works harder to stay below it.
	SoftMemoryLimit string
}

// DefaultSoftMemoryLimit keeps the operator's RSS under 100 MiB at 1,000
// accounts when its heap peaks (without a limit Go lets the heap grow to
// twice the live set). With the live heap at ~26 MB the collector seldom
// needs it (~1 ms of CPU per Account; docs/benchmarks.md, fourth pass).
// A GOMEMLIMIT in the environment replaces it.
const DefaultSoftMemoryLimit = "64Mi"

func softMemoryLimitDefault() string {
	if os.Getenv("GOMEMLIMIT") != "" {
		return ""
	}
	return DefaultSoftMemoryLimit
}

// NewOptions returns the defaults.
func NewOptions() *Options {
	return &Options{
		Kubeconfig:      os.Getenv("KUBECONFIG"),
		Workspace:       "root:platform-mesh-system",
		EndpointSlice:   "core.platform-mesh.io",
		OrgsPath:        "root:orgs",
		BasePath:        "root",
		MetricsAddr:     "127.0.0.1:8080",
		HealthAddr:      "127.0.0.1:8081",
		Workers:         16,
		SoftMemoryLimit: softMemoryLimitDefault(),
		WaitForURL:      5 * time.Minute,
		InitializerType: "account-operator",
		QPS:             300,
		Burst:           600,
	}
}

// AddFlags registers the flags.
func (o *Options) AddFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.Kubeconfig, "kubeconfig", o.Kubeconfig, "kubeconfig of the operator's credential (default $KUBECONFIG)")
	fs.StringVar(&o.Context, "context", o.Context, "context in --kubeconfig (default: its current context)")
	fs.StringVar(&o.Workspace, "workspace", o.Workspace, "path of the provider workspace that exports core.platform-mesh.io")
	fs.StringVar(&o.EndpointSlice, "kcp-api-export-endpoint-slice-name", o.EndpointSlice, "name of the APIExportEndpointSlice in --workspace")
	fs.StringVar(&o.OrgsPath, "orgs-path", o.OrgsPath, "workspace the organizations live in (their WorkspaceTypes are created there)")
	fs.StringVar(&o.BasePath, "base-types-path", o.BasePath, "workspace holding the base WorkspaceTypes org and account")
	fs.StringVar(&o.MetricsAddr, "metrics-bind-address", o.MetricsAddr, "address of /metrics (0 turns it off)")
	fs.StringVar(&o.HealthAddr, "health-probe-bind-address", o.HealthAddr, "address of /healthz and /readyz")
	fs.IntVar(&o.Workers, "workers", o.Workers, "Accounts reconciled in parallel")
	fs.DurationVar(&o.WaitForURL, "wait-for-endpoint", o.WaitForURL, "how long to wait at start for the endpoint slice's URL")
	fs.StringVar(&o.InitializerType, "initializer-workspace-type", o.InitializerType,
		"WorkspaceType in --workspace whose initializer the operator is (root:org and root:account extend it): it makes an Account's creator admin of the new workspace, then releases it")
	fs.Func("kube-api-qps", fmt.Sprintf("queries per second to the core (default %v)", o.QPS), func(v string) error {
		f, err := strconv.ParseFloat(v, 32)
		o.QPS = float32(f)
		return err
	})
	fs.IntVar(&o.Burst, "kube-api-burst", o.Burst, "burst of queries to the core")
	fs.StringVar(&o.SoftMemoryLimit, "soft-memory-limit", o.SoftMemoryLimit,
		"soft limit of the Go runtime's memory, a quantity such as 96Mi (as GOMEMLIMIT; the collector then runs more often, up to half the CPU, when the live heap nears it); empty: none (the default when GOMEMLIMIT is set)")
	fs.BoolVar(&o.Profiling, "profiling", o.Profiling, "serve Go's pprof profiles under /debug/pprof/ on --metrics-bind-address")
}

// Validate checks the flags.
func (o *Options) Validate() error {
	var errs []error
	if o.EndpointSlice == "" {
		errs = append(errs, errors.New("--kcp-api-export-endpoint-slice-name is required"))
	}
	for flagName, p := range map[string]string{"--workspace": o.Workspace, "--orgs-path": o.OrgsPath, "--base-types-path": o.BasePath} {
		if p == "" || strings.ContainsAny(p, "/ ") {
			errs = append(errs, fmt.Errorf("%s %q is not a workspace path", flagName, p))
		}
	}
	if o.Workers < 1 {
		errs = append(errs, errors.New("--workers must be at least 1"))
	}
	if o.InitializerType == "" || strings.ContainsAny(o.InitializerType, ":/ ") {
		errs = append(errs, fmt.Errorf("--initializer-workspace-type %q is not a WorkspaceType name", o.InitializerType))
	}
	if o.SoftMemoryLimit != "" {
		if q, err := resource.ParseQuantity(o.SoftMemoryLimit); err != nil || q.Sign() <= 0 {
			errs = append(errs, fmt.Errorf("--soft-memory-limit %q is not a positive quantity such as 96Mi", o.SoftMemoryLimit))
		}
	}
	if o.QPS <= 0 || o.Burst < 1 {
		errs = append(errs, errors.New("--kube-api-qps must be positive and --kube-api-burst at least 1"))
	}
	return errors.Join(errs...)
}

// Completed are validated options with the loaded configs.
type Completed struct {
	*Options
	// Provider points at the provider workspace.
	Provider *rest.Config
	// Base points at the core's base URL with the same credential.
	Base *rest.Config
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
	base.QPS, base.Burst = o.QPS, o.Burst
	provider := rest.CopyConfig(base)
	provider.Host = base.Host + "/clusters/" + o.Workspace
	return &Completed{Options: o, Provider: provider, Base: base}, nil
}

// loadBase loads a kubeconfig context and points it at the core's base URL.
func loadBase(kubeconfig, context string) (*rest.Config, error) {
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		&clientcmd.ClientConfigLoadingRules{ExplicitPath: kubeconfig},
		&clientcmd.ConfigOverrides{CurrentContext: context}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("loading kubeconfig %q: %w", kubeconfig, err)
	}
	cfg.UserAgent = "account-operator"
	if len(cfg.CAData) == 0 && cfg.CAFile != "" {
		if cfg.CAData, err = os.ReadFile(cfg.CAFile); err != nil {
			return nil, fmt.Errorf("reading CA %s: %w", cfg.CAFile, err)
		}
		cfg.CAFile = ""
	}
	cfg.Host = endpointslice.BaseHost(cfg.Host)
	return cfg, nil
}
