package accountoperator

import (
	"context"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/go-logr/logr"
	apisv1alpha1 "github.com/kcp-dev/sdk/apis/apis/v1alpha1"
	apisv1alpha2 "github.com/kcp-dev/sdk/apis/apis/v1alpha2"
	kcpcorev1alpha1 "github.com/kcp-dev/sdk/apis/core/v1alpha1"
	tenancyv1alpha1 "github.com/kcp-dev/sdk/apis/tenancy/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	ctrlmanager "sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	corev1alpha1 "github.com/meshplane/meshplane/apis/core/v1alpha1"
	"github.com/meshplane/meshplane/operators/command"
	"github.com/meshplane/meshplane/operators/controllers/account"
	"github.com/meshplane/meshplane/operators/controllers/accountinfo"
	"github.com/meshplane/meshplane/providers/manager"
)

// Scheme knows every type the operator reads and writes.
func Scheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		corev1.AddToScheme, rbacv1.AddToScheme, corev1alpha1.AddToScheme, tenancyv1alpha1.AddToScheme,
		apisv1alpha1.AddToScheme, apisv1alpha2.AddToScheme, kcpcorev1alpha1.AddToScheme,
	} {
		if err := add(s); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Run starts the operator and blocks until ctx ends.
func Run(ctx context.Context, c *Completed, log logr.Logger) error {
	if c.SoftMemoryLimit != "" {
		q := resource.MustParse(c.SoftMemoryLimit) // validated
		debug.SetMemoryLimit(q.Value())
	}
	scheme, err := Scheme()
	if err != nil {
		return err
	}
	metrics := metricsserver.Options{BindAddress: c.MetricsAddr}
	if c.Profiling {
		metrics.ExtraHandlers = command.ProfilingHandlers()
	}
	kit, err := manager.New(ctx, c.Provider, manager.Options{
		EndpointSlice: c.EndpointSlice,
		Scheme:        scheme,
		Log:           log,
		WaitForURL:    c.WaitForURL,
		Manager: ctrlmanager.Options{
			Metrics:                 metrics,
			HealthProbeBindAddress:  c.HealthAddr,
			GracefulShutdownTimeout: ptr.To(30 * time.Second),
		},
	})
	if err != nil {
		return err
	}
	mgr := kit.Manager
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return err
	}
	if err := mgr.AddReadyzCheck("ping", healthz.Ping); err != nil {
		return err
	}

	vw, err := newInitializing(ctx, c.Provider, scheme, c.InitializerType, c.WaitForURL)
	if err != nil {
		return fmt.Errorf("the operator's initializer: %w", err)
	}
	log.Info("initializing workspaces", "initializer", vw.id, "virtualWorkspaces", vw.URLs())
	opts := account.Options{OrgsPath: c.OrgsPath, BasePath: c.BasePath, Workers: c.Workers, ClusterCA: string(c.Base.CAData),
		PathOf: kit.Provider.Path, Initializer: vw.id, BindCreator: vw.bindCreator, Release: vw.release, Client: kit.Client}
	if err := account.SetupWithManager(kit, opts); err != nil {
		return fmt.Errorf("account controller: %w", err)
	}
	if err := accountinfo.SetupWithManager(kit); err != nil {
		return fmt.Errorf("accountinfo controller: %w", err)
	}
	log.Info("starting", "virtualWorkspace", kit.URL, "metrics", c.MetricsAddr, "health", c.HealthAddr)
	return mgr.Start(ctx)
}
