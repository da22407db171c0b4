package securityoperator

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"github.com/kcp-dev/logicalcluster/v3"
	apisv1alpha1 "github.com/kcp-dev/sdk/apis/apis/v1alpha1"
	apisv1alpha2 "github.com/kcp-dev/sdk/apis/apis/v1alpha2"
	kcpcorev1alpha1 "github.com/kcp-dev/sdk/apis/core/v1alpha1"
	tenancyv1alpha1 "github.com/kcp-dev/sdk/apis/tenancy/v1alpha1"
	openfgav1 "github.com/openfga/api/proto/openfga/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	ctrlmanager "sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/multicluster-runtime/pkg/multicluster"
	mcreconcile "sigs.k8s.io/multicluster-runtime/pkg/reconcile"

	corev1alpha1 "github.com/meshplane/meshplane/apis/core/v1alpha1"
	"github.com/meshplane/meshplane/apis/fga"
	"github.com/meshplane/meshplane/operators/command"
	"github.com/meshplane/meshplane/operators/controllers/invite"
	"github.com/meshplane/meshplane/operators/controllers/roleassignment"
	"github.com/meshplane/meshplane/operators/controllers/security"
	"github.com/meshplane/meshplane/operators/controllers/store"
	"github.com/meshplane/meshplane/operators/fgaclient"
	"github.com/meshplane/meshplane/operators/lifecycle"
	"github.com/meshplane/meshplane/providers/dispatch"
	"github.com/meshplane/meshplane/providers/manager"
	"github.com/meshplane/meshplane/sdk/keyfile"
)

// Scheme knows every type the operator reads and writes.
func Scheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		corev1alpha1.AddToScheme, tenancyv1alpha1.AddToScheme, apisv1alpha1.AddToScheme, apisv1alpha2.AddToScheme, kcpcorev1alpha1.AddToScheme,
	} {
		if err := add(s); err != nil {
			return nil, err
		}
	}
	return s, nil
}

const callTimeout = 30 * time.Second

// Run starts the operator and blocks until ctx ends.
func Run(ctx context.Context, c *Completed, log logr.Logger) error {
	scheme, err := Scheme()
	if err != nil {
		return err
	}
	var fgaOpts []fgaclient.Option
	if c.OpenFGAKeyFile != "" {
		key, err := keyfile.Read(c.OpenFGAKeyFile)
		if err != nil {
			return err
		}
		fgaOpts = append(fgaOpts, fgaclient.WithPresharedKey(key))
	}
	fgaClient, err := fgaclient.New(c.OpenFGAURL, fgaOpts...)
	if err != nil {
		return err
	}
	if c.OpenFGAGRPC != "" {
		if err := fgaClient.UseGRPC(c.OpenFGAGRPC); err != nil {
			return err
		}
		defer fgaClient.Close()
	}
	metrics := metricsserver.Options{BindAddress: c.MetricsAddr}
	if c.Profiling {
		metrics.ExtraHandlers = command.ProfilingHandlers()
	}
	// The lifecycle watchers, set before the manager starts: the paths of
	// the workspaces they follow need no request.
	var followed atomic.Pointer[[]*lifecycle.Watcher]
	lookup := manager.LogicalClusterPath(c.Workspaces)
	resolve := func(ctx context.Context, cluster string) (string, error) {
		if ws := followed.Load(); ws != nil {
			for _, w := range *ws {
				if p, ok := w.Path(cluster); ok {
					return p, nil
				}
			}
		}
		return lookup(ctx, cluster)
	}
	kit, err := manager.New(ctx, c.Provider, manager.Options{
		EndpointSlice: c.EndpointSlice,
		Scheme:        scheme,
		Log:           log,
		WaitForURL:    c.WaitForURL,
		// Workspace paths (a Store referenced as root:orgs) come from the
		// LogicalClusters the lifecycle watchers follow (every new account
		// workspace: while it initializes the core refuses to read its
		// LogicalCluster directly), else are read with the lifecycle
		// credential: the scoped one reaches neither them nor other
		// workspaces directly.
		Resolve: resolve,
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
	wildcard, err := client.New(store.WildcardConfig(kit.VirtualWorkspace), client.Options{Scheme: scheme})
	if err != nil {
		return err
	}
	// With a credential to follow APIBindings and CRDs everywhere, an
	// organization's bound resources are discovered again when they
	// change, not at every look at its Store.
	discover := boundResources(c.Workspaces)
	bound := func(ctx context.Context, workspace string) ([]fga.Resource, error) {
		rs, _, err := discover(ctx, workspace)
		return rs, err
	}
	if c.APIChanges != nil {
		// The organization's model also has the resources bound in its
		// accounts: the watch tells which workspaces bind anything (one
		// watch per shard, of the shards listed in root).
		tree := newBoundTree(newBoundCache(discover, kit.Provider.Path), kit.Provider.Path)
		if err := watchBoundSourcesOfShards(ctx, log.WithName("api-changes"), c.APIChanges, tree.observe); err != nil {
			return fmt.Errorf("following APIBindings and CRDs: %w", err)
		}
		bound = tree.resources
	}
	orgs := workspaceCluster(c.Workspaces, c.OrgsWorkspace, func(cfg *rest.Config) (client.Client, error) {
		return client.New(cfg, client.Options{Scheme: scheme})
	})
	if err := store.SetupWithManager(mgr, store.Options{
		FGA: fgaClient, Wildcard: wildcard, PathOf: kit.Provider.Path, ClusterOf: kit.Provider.Cluster, Workers: c.Workers,
		BoundResources: bound, OrgsCluster: orgs, Shared: c.OrganizationStores == StoresShared,
	}); err != nil {
		return fmt.Errorf("store controller: %w", err)
	}

	// The export's virtual workspace reaches Accounts and Stores in every
	// workspace of the account tree.
	exported := func(ctx context.Context, cluster string) (client.Client, error) {
		cl, err := mgr.GetCluster(ctx, multicluster.ClusterName(cluster))
		if err != nil {
			return nil, fmt.Errorf("cluster %s: %w", cluster, err)
		}
		return cl.GetClient(), nil
	}
	// Accounts, Stores and AccountInfos are read from the shared informers
	// (no engaged cluster needed; the Account informer is made here, the
	// others by their controller and watch below), else through the
	// cluster's client. Their objects are the informers': copied.
	shared := kit.Provider.Dispatch()
	if err := shared.Watch(&corev1alpha1.Account{}, toolscache.ResourceEventHandlerFuncs{},
		func(err error) { log.Error(err, "following Accounts") }); err != nil {
		return err
	}
	deps := security.Deps{
		CoreModule: fga.CoreModule,
		GetAccount: func(ctx context.Context, cluster, name string) (*corev1alpha1.Account, error) {
			if acc, ok := dispatch.GetCopy(shared, &corev1alpha1.Account{}, cluster, name); ok {
				return acc, nil
			}
			cl, err := exported(ctx, cluster)
			if err != nil {
				return nil, err
			}
			acc := &corev1alpha1.Account{}
			return acc, cl.Get(ctx, client.ObjectKey{Name: name}, acc)
		},
		GetStore: func(ctx context.Context, cluster, name string) (*corev1alpha1.Store, error) {
			if st, ok := dispatch.GetCopy(shared, &corev1alpha1.Store{}, cluster, name); ok {
				return st, nil
			}
			cl, err := exported(ctx, cluster)
			if err != nil {
				return nil, err
			}
			st := &corev1alpha1.Store{}
			return st, cl.Get(ctx, client.ObjectKey{Name: name}, st)
		},
		CreateStore: func(ctx context.Context, cluster string, st *corev1alpha1.Store) error {
			cl, err := exported(ctx, cluster)
			if err != nil {
				return err
			}
			return cl.Create(ctx, st)
		},
		DeleteStore: func(ctx context.Context, cluster string, st *corev1alpha1.Store) error {
			cl, err := exported(ctx, cluster)
			if err != nil {
				return err
			}
			return cl.Delete(ctx, st, client.Preconditions{UID: &st.UID})
		},
		// From the shared informer (the export's virtual workspace serves
		// initializing workspaces that bind it), engaged or not: one not
		// there yet is waited for, its arrival handles the workspace again
		// (the watch below).
		AccountInfo: func(ctx context.Context, cluster string) (*corev1alpha1.AccountInfo, error) {
			info, _ := dispatch.GetCopy(shared, &corev1alpha1.AccountInfo{}, cluster, corev1alpha1.AccountInfoName)
			return info, nil
		},
		// Through the export's virtual workspace (Workspaces are a claim
		// of the account tree's bindings).
		WorkspaceCluster: func(ctx context.Context, cluster, name string) (string, bool, error) {
			cl, err := exported(ctx, cluster)
			if err != nil {
				// A cluster no longer (or not yet) served: no Workspace to
				// read there.
				return "", false, nil
			}
			ws := &tenancyv1alpha1.Workspace{}
			if err := cl.Get(ctx, client.ObjectKey{Name: name}, ws); err != nil {
				if apierrors.IsNotFound(err) {
					return "", false, nil
				}
				return "", false, err
			}
			return ws.Spec.Cluster, true, nil
		},
		WriteTuples: fgaClient.Write,
		ReadTuples:  fgaClient.Read,
	}

	// The accounts' own tuples (creator, parent), written again at start.
	ownership := &security.Ownership{Deps: deps}
	if err := kit.WildcardController("account-ownership", &corev1alpha1.Account{}, c.Workers,
		mcreconcile.Func(func(ctx context.Context, req mcreconcile.Request) (reconcile.Result, error) {
			after, err := ownership.Reconcile(ctx, string(req.ClusterName), req.Name)
			return reconcile.Result{RequeueAfter: after}, err
		})); err != nil {
		return fmt.Errorf("account ownership controller: %w", err)
	}

	// RoleAssignments: grants tenants make in their own workspaces.
	if err := roleassignment.SetupWithManager(mgr, roleassignment.Options{
		Write: fgaClient.Write,
		Model: func(ctx context.Context, storeID string) (*openfgav1.AuthorizationModel, error) {
			id, err := fgaClient.LatestModelID(ctx, storeID)
			if err != nil || id == "" {
				return nil, err
			}
			return fgaClient.Model(ctx, storeID, id)
		},
		AccountInfo:      deps.AccountInfo,
		WorkspaceCluster: deps.WorkspaceCluster,
		Workers:          c.Workers,
	}); err != nil {
		return fmt.Errorf("roleassignment controller: %w", err)
	}

	// Invites: invitations that turn into RoleAssignments.
	if err := invite.SetupWithManager(mgr, invite.Options{Workers: c.Workers}); err != nil {
		return fmt.Errorf("invite controller: %w", err)
	}

	// The lifecycle virtual workspaces of the WorkspaceType.
	typeCfg := rest.CopyConfig(c.Lifecycle)
	typeCfg.Host = c.Lifecycle.Host + "/clusters/" + c.TypePath
	typeClient, err := client.New(typeCfg, client.Options{Scheme: scheme})
	if err != nil {
		return err
	}
	waitCtx, cancel := context.WithTimeout(ctx, c.WaitForURL)
	defer cancel()
	// Every cluster's client maps the same two cluster-scoped kinds.
	mapper := meta.NewDefaultRESTMapper(nil)
	for _, gvk := range []schema.GroupVersionKind{
		kcpcorev1alpha1.SchemeGroupVersion.WithKind("LogicalCluster"),
		corev1alpha1.SchemeGroupVersion.WithKind("AccountInfo"),
	} {
		mapper.Add(gvk, meta.RESTScopeRoot)
	}
	handlers := map[lifecycle.Kind]lifecycle.Handler{lifecycle.Initializing: security.Initializer(deps), lifecycle.Terminating: security.Terminator(deps)}
	makeWatchers := func(kind lifecycle.Kind, urls []string) []*lifecycle.Watcher {
		var out []*lifecycle.Watcher
		for _, url := range urls {
			out = append(out, &lifecycle.Watcher{Kind: kind, ID: c.WorkspaceType, URL: url, Config: c.Lifecycle, Scheme: scheme,
				Handle: handlers[kind], Log: log.WithName(string(kind)).WithValues("url", url), Workers: c.Workers, Mapper: mapper})
		}
		return out
	}
	var watchers []*lifecycle.Watcher
	for _, kind := range []lifecycle.Kind{lifecycle.Initializing, lifecycle.Terminating} {
		// One watcher per shard's virtual workspace (the shards at start;
		// followNewShards adds those of shards added later).
		urls, err := lifecycle.URLsOf(waitCtx, typeClient, c.TypeName, kind)
		if err != nil {
			return err
		}
		watchers = append(watchers, makeWatchers(kind, urls)...)
	}
	followed.Store(&watchers)
	// A new AccountInfo is what the initializer waits for: handle its
	// workspace at once rather than at the next retry (the initializing
	// watcher of the shard holding it; the others hold no such workspace).
	if err := shared.Watch(&corev1alpha1.AccountInfo{}, toolscache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			o, ok := obj.(client.Object)
			if !ok {
				return
			}
			for _, w := range *followed.Load() {
				if w.Kind == lifecycle.Initializing {
					w.Requeue(logicalcluster.From(o).String())
				}
			}
		},
	}, func(err error) { log.Error(err, "following AccountInfos") }); err != nil {
		return err
	}
	// The watchers run beside the manager and end with ctx.
	for _, w := range watchers {
		go func() { _ = w.Run(ctx) }()
	}
	go followNewShards(ctx, log, typeClient, c.TypeName, &followed, makeWatchers)
	log.Info("starting", "virtualWorkspace", kit.URL, "openfga", c.OpenFGAURL, "openfgaGRPC", c.OpenFGAGRPC, "workspaceType", c.WorkspaceType,
		"metrics", c.MetricsAddr, "health", c.HealthAddr)
	return mgr.Start(ctx)
}
