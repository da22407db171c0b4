// Package frame is what both example providers share: the flags that say
// where the provider workspace and its APIExportEndpointSlice are, the
// credential (a kubeconfig, typically the scoped one of
// `provider-kubeconfig --service-account`), the multicluster manager built
// with the provider kit, and the list of engaged workspaces served at
// /engaged on the metrics address.
package frame

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	ctrlmanager "sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/meshplane/meshplane/providers/endpointslice"
	"github.com/meshplane/meshplane/providers/manager"
)

// Options are the flags every example provider has.
type Options struct {
	Kubeconfig, Context string
	// Workspace is the provider workspace's path.
	Workspace     string
	EndpointSlice string
	MetricsAddr   string
	HealthAddr    string
	WaitForURL    time.Duration
	// Workers is how many objects are reconciled in parallel.
	Workers int
}

// AddFlags registers the flags; slice is the default endpoint slice (the
// export's name).
func (o *Options) AddFlags(fs *flag.FlagSet, slice string) {
	o.Kubeconfig = os.Getenv("KUBECONFIG")
	o.EndpointSlice = slice
	o.MetricsAddr, o.HealthAddr = "127.0.0.1:0", "127.0.0.1:0"
	o.WaitForURL = 5 * time.Minute
	fs.StringVar(&o.Kubeconfig, "kubeconfig", o.Kubeconfig, "kubeconfig of the provider's credential, e.g. from `provider-kubeconfig --service-account` (default $KUBECONFIG)")
	fs.StringVar(&o.Context, "context", "", "context in --kubeconfig (default: its current context)")
	fs.StringVar(&o.Workspace, "workspace", "", "path of the provider workspace holding the APIExport (required)")
	fs.StringVar(&o.EndpointSlice, "endpoint-slice", o.EndpointSlice, "name of the APIExportEndpointSlice in --workspace")
	fs.StringVar(&o.MetricsAddr, "metrics-bind-address", o.MetricsAddr, "address of /metrics and /engaged (0 turns them off)")
	fs.StringVar(&o.HealthAddr, "health-probe-bind-address", o.HealthAddr, "address of /healthz and /readyz")
	fs.DurationVar(&o.WaitForURL, "wait-for-endpoint", o.WaitForURL, "how long to wait at start for the endpoint slice's URL")
	fs.IntVar(&o.Workers, "workers", 4, "objects reconciled in parallel")
}

// Validate checks the flags.
func (o *Options) Validate() error {
	var errs []error
	if o.Workspace == "" || strings.ContainsAny(o.Workspace, "/ ") {
		errs = append(errs, fmt.Errorf("--workspace %q is not a workspace path", o.Workspace))
	}
	if o.EndpointSlice == "" {
		errs = append(errs, errors.New("--endpoint-slice is required"))
	}
	if o.Workers < 1 {
		errs = append(errs, errors.New("--workers must be at least 1"))
	}
	return errors.Join(errs...)
}

// ProviderConfig loads the kubeconfig and points it at the provider
// workspace (whatever the kubeconfig's server path: the core, a workspace,
// or the virtual workspace URL provider-kubeconfig writes).
func (o *Options) ProviderConfig(userAgent string) (*rest.Config, error) {
	cfg, err := LoadKubeconfig(o.Kubeconfig, o.Context)
	if err != nil {
		return nil, err
	}
	cfg.UserAgent = userAgent
	cfg.Host = endpointslice.BaseHost(cfg.Host) + "/clusters/" + o.Workspace
	return cfg, nil
}

// LoadKubeconfig loads a context of a kubeconfig, with its CA inlined.
func LoadKubeconfig(path, context string) (*rest.Config, error) {
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		&clientcmd.ClientConfigLoadingRules{ExplicitPath: path},
		&clientcmd.ConfigOverrides{CurrentContext: context}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("loading kubeconfig %q: %w", path, err)
	}
	if len(cfg.CAData) == 0 && cfg.CAFile != "" {
		if cfg.CAData, err = os.ReadFile(cfg.CAFile); err != nil {
			return nil, fmt.Errorf("reading CA %s: %w", cfg.CAFile, err)
		}
		cfg.CAFile = ""
	}
	cfg.QPS, cfg.Burst = 50, 100
	return cfg, nil
}

// NewKit builds the provider kit's manager with health checks and the
// engaged-workspace list.
func (o *Options) NewKit(ctx context.Context, cfg *rest.Config, scheme *runtime.Scheme, log logr.Logger) (*manager.Kit, *Engaged, error) {
	kit, err := manager.New(ctx, cfg, manager.Options{
		EndpointSlice: o.EndpointSlice,
		Scheme:        scheme,
		Log:           log,
		WaitForURL:    o.WaitForURL,
		Manager: ctrlmanager.Options{
			Metrics:                 metricsserver.Options{BindAddress: o.MetricsAddr},
			HealthProbeBindAddress:  o.HealthAddr,
			GracefulShutdownTimeout: ptr.To(30 * time.Second),
		},
	})
	if err != nil {
		return nil, nil, err
	}
	for _, add := range []func(string, healthz.Checker) error{kit.Manager.AddHealthzCheck, kit.Manager.AddReadyzCheck} {
		if err := add("ping", healthz.Ping); err != nil {
			return nil, nil, err
		}
	}
	engaged := NewEngaged(log.WithName("engaged"))
	if err := kit.Manager.Add(engaged); err != nil {
		return nil, nil, err
	}
	if o.MetricsAddr != "0" {
		if err := kit.Manager.GetLocalManager().AddMetricsServerExtraHandler("/engaged", engaged); err != nil {
			return nil, nil, err
		}
	}
	return kit, engaged, nil
}
