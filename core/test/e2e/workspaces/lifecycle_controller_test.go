package workspaces

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	corev1alpha1 "github.com/kcp-dev/sdk/apis/core/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// lifecycleRole says whether a lifecycleController initializes or terminates
// workspaces.
type lifecycleRole string

const (
	roleInitializer lifecycleRole = "initializer"
	roleTerminator  lifecycleRole = "terminator"
)

// lifecycleAction is the work done in one cluster before the initializer
// (or terminator) is removed. c talks to <vw url>/clusters/<cluster>.
type lifecycleAction func(ctx context.Context, c client.Client, cluster string, lc *corev1alpha1.LogicalCluster) error

// lifecycleController is a workspace initializer or terminator written the
// way a kcp user writes one with controller-runtime: a controller whose
// events come from a list+watch of LogicalClusters through the type's virtual
// workspace at <vw url>/clusters/* (a controller-runtime client.WithWatch),
// and a reconciler that works on one cluster through
// <vw url>/clusters/<name>: it runs its action there, then removes its
// initializer from status.initializers (or its terminator from
// status.terminators) with a status patch.
//
// The test kit has a client-go one (framework.RunLifecycleController) for
// modules that do not use controller-runtime; this one stays here as the
// check that controller-runtime's manager, REST mapper and clients work on
// the lifecycle virtual workspaces.
//
// Requests are logical cluster names. The controller-runtime cache is not
// used for LogicalClusters: they are all named "cluster", and its informers
// key objects by namespace/name, so a cache on /clusters/* holds only one of
// them (kcp's own tooling uses cluster-aware keys for that).
type lifecycleController struct {
	role   lifecycleRole
	id     string // <cluster of the type>:<type name>, e.g. root:my-type
	vwURL  string
	cfg    *rest.Config
	action lifecycleAction

	mgr      manager.Manager
	wildcard client.WithWatch
	events   chan event.TypedGenericEvent[*corev1alpha1.LogicalCluster]
	cancel   context.CancelFunc
	stopped  chan struct{}
	closed   atomic.Bool

	mu       sync.Mutex
	clients  map[string]client.Client
	seen     map[string]string // cluster -> path, every cluster the watch delivered
	finished map[string]string // cluster -> path, clusters whose id was removed
	journal  []string
	startErr error
}

var setGlobalLoggerOnce sync.Once

// startLifecycleController starts a controller for the initializer or
// terminator id on the virtual workspace at vwURL, authenticating as cfg
// does. It stops when the test ends, or with stop.
func startLifecycleController(t *testing.T, role lifecycleRole, id, vwURL string, cfg *rest.Config, action lifecycleAction) *lifecycleController {
	t.Helper()
	// controller-runtime complains (with a stack trace) when its global
	// logger is used without being set; this controller logs to its journal.
	setGlobalLoggerOnce.Do(func() { ctrllog.SetLogger(logr.Discard()) })

	lc := &lifecycleController{
		role: role, id: id, vwURL: strings.TrimSuffix(vwURL, "/"), cfg: rest.CopyConfig(cfg), action: action,
		clients: map[string]client.Client{}, seen: map[string]string{}, finished: map[string]string{},
		stopped: make(chan struct{}),
	}
	wildcard := rest.CopyConfig(cfg)
	wildcard.Host = lc.vwURL + "/clusters/*"
	logger := funcr.New(func(prefix, args string) { lc.record("controller-runtime %s %s", prefix, args) }, funcr.Options{})
	mgr, err := manager.New(wildcard, manager.Options{
		Scheme:                 kcpScheme,
		Logger:                 logger,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		LeaderElection:         false,
	})
	if err != nil {
		t.Fatalf("creating a controller-runtime manager on %s: %v", wildcard.Host, err)
	}
	lc.mgr = mgr

	lc.wildcard, err = client.NewWithWatch(wildcard, client.Options{Scheme: kcpScheme, Mapper: mgr.GetRESTMapper()})
	if err != nil {
		t.Fatalf("creating a controller-runtime client on %s: %v", wildcard.Host, err)
	}
	lc.events = make(chan event.TypedGenericEvent[*corev1alpha1.LogicalCluster], 100)
	h := handler.TypedFuncs[*corev1alpha1.LogicalCluster, string]{
		GenericFunc: func(_ context.Context, e event.TypedGenericEvent[*corev1alpha1.LogicalCluster], q workqueue.TypedRateLimitingInterface[string]) {
			if cluster := e.Object.Annotations[framework.ClusterAnnotation]; cluster != "" && lc.carries(e.Object) {
				q.Add(cluster)
			}
		},
	}
	err = builder.TypedControllerManagedBy[string](mgr).
		Named(fmt.Sprintf("e2e-%s-%s", role, strings.ReplaceAll(id, ":", "-"))).
		WithOptions(controller.TypedOptions[string]{
			SkipNameValidation:      ptr.To(true),
			MaxConcurrentReconciles: 2,
			RateLimiter:             workqueue.NewTypedItemExponentialFailureRateLimiter[string](100*time.Millisecond, 2*time.Second),
		}).
		WatchesRawSource(source.TypedChannel[*corev1alpha1.LogicalCluster, string](lc.events, h)).
		Complete(reconcile.TypedFunc[string](lc.reconcile))
	if err != nil {
		t.Fatalf("building the %s controller: %v", role, err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	lc.cancel = cancel
	watcherDone := make(chan struct{})
	go func() {
		defer close(watcherDone)
		lc.listWatch(ctx)
	}()
	go func() {
		defer close(lc.stopped)
		defer func() { <-watcherDone }()
		if err := mgr.Start(ctx); err != nil {
			lc.mu.Lock()
			lc.startErr = err
			lc.mu.Unlock()
			lc.record("manager exited: %v", err)
		}
	}()
	t.Cleanup(func() {
		lc.stop()
		if t.Failed() {
			t.Logf("%s", lc.report())
		}
	})
	t.Logf("started %s controller for %s on %s", role, id, wildcard.Host)
	return lc
}

// listWatch feeds the controller: it lists the LogicalClusters of the
// virtual workspace, then watches from the list's resourceVersion, and
// starts over when the watch ends, until ctx is done.
func (lc *lifecycleController) listWatch(ctx context.Context) {
	send := func(obj *corev1alpha1.LogicalCluster) {
		lc.mu.Lock()
		lc.seen[obj.Annotations[framework.ClusterAnnotation]] = obj.Annotations[framework.PathAnnotation]
		lc.mu.Unlock()
		select {
		case lc.events <- event.TypedGenericEvent[*corev1alpha1.LogicalCluster]{Object: obj}:
		case <-ctx.Done():
		}
	}
	for ctx.Err() == nil {
		list := &corev1alpha1.LogicalClusterList{}
		if err := lc.wildcard.List(ctx, list); err != nil {
			lc.record("list %s/clusters/*/apis/core.kcp.io/v1alpha1/logicalclusters: %s", lc.vwURL, framework.ErrString(err))
			sleepCtx(ctx, time.Second)
			continue
		}
		lc.record("list: %d logicalclusters at resourceVersion %s", len(list.Items), list.ResourceVersion)
		for i := range list.Items {
			lc.record("list: %s", describeLogicalCluster(&list.Items[i]))
			send(&list.Items[i])
		}
		w, err := lc.wildcard.Watch(ctx, &corev1alpha1.LogicalClusterList{}, &client.ListOptions{
			Raw: &metav1.ListOptions{ResourceVersion: list.ResourceVersion, AllowWatchBookmarks: true},
		})
		if err != nil {
			lc.record("watch %s/clusters/*/apis/core.kcp.io/v1alpha1/logicalclusters: %s", lc.vwURL, framework.ErrString(err))
			sleepCtx(ctx, time.Second)
			continue
		}
		lc.consume(ctx, w, send)
		w.Stop()
	}
}

// consume handles the events of one watch until it ends.
func (lc *lifecycleController) consume(ctx context.Context, w watch.Interface, send func(*corev1alpha1.LogicalCluster)) {
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-w.ResultChan():
			if !ok {
				lc.record("watch: closed by the server, listing again")
				return
			}
			switch ev.Type {
			case watch.Added, watch.Modified:
				if obj, ok := ev.Object.(*corev1alpha1.LogicalCluster); ok {
					lc.record("watch: %s %s", ev.Type, describeLogicalCluster(obj))
					send(obj)
				}
			case watch.Deleted:
				if obj, ok := ev.Object.(*corev1alpha1.LogicalCluster); ok {
					lc.record("watch: DELETED (left the virtual workspace) %s", describeLogicalCluster(obj))
				}
			case watch.Error:
				lc.record("watch: error event %v, listing again", apierrors.FromObject(ev.Object))
				return
			}
		}
	}
}

func sleepCtx(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// stop stops the manager and waits (bounded) for it.
func (lc *lifecycleController) stop() {
	lc.cancel()
	select {
	case <-lc.stopped:
	case <-time.After(45 * time.Second):
		lc.record("manager did not stop within 45s")
	}
	lc.closed.Store(true)
}

// carries reports whether the LogicalCluster still has the controller's id.
func (lc *lifecycleController) carries(obj *corev1alpha1.LogicalCluster) bool {
	if lc.role == roleInitializer {
		return slices.Contains(obj.Status.Initializers, corev1alpha1.LogicalClusterInitializer(lc.id))
	}
	return slices.Contains(obj.Status.Terminators, corev1alpha1.LogicalClusterTerminator(lc.id))
}

// clusterClient is a client on <vw url>/clusters/<cluster>.
func (lc *lifecycleController) clusterClient(cluster string) (client.Client, error) {
	lc.mu.Lock()
	defer lc.mu.Unlock()
	if c, ok := lc.clients[cluster]; ok {
		return c, nil
	}
	cfg := rest.CopyConfig(lc.cfg)
	cfg.Host = lc.vwURL + "/clusters/" + cluster
	c, err := client.New(cfg, client.Options{Scheme: kcpScheme, Mapper: lc.mgr.GetRESTMapper()})
	if err != nil {
		return nil, err
	}
	lc.clients[cluster] = c
	return c, nil
}

func (lc *lifecycleController) reconcile(ctx context.Context, cluster string) (reconcile.Result, error) {
	lc.mu.Lock()
	_, done := lc.finished[cluster]
	lc.mu.Unlock()
	c, err := lc.clusterClient(cluster)
	if err != nil {
		return reconcile.Result{}, err
	}
	obj := &corev1alpha1.LogicalCluster{}
	if err := c.Get(ctx, client.ObjectKey{Name: corev1alpha1.LogicalClusterName}, obj); err != nil {
		if done && (apierrors.IsForbidden(err) || apierrors.IsNotFound(err)) {
			// expected: the cluster left the virtual workspace when we were done
			return reconcile.Result{}, nil
		}
		lc.record("reconcile %s: GET %s/clusters/%s/apis/core.kcp.io/v1alpha1/logicalclusters/cluster: %s", cluster, lc.vwURL, cluster, framework.ErrString(err))
		return reconcile.Result{}, err
	}
	if !lc.carries(obj) {
		lc.record("reconcile %s: nothing to do, %s", cluster, describeLogicalCluster(obj))
		return reconcile.Result{}, nil
	}
	if err := lc.action(ctx, c, cluster, obj); err != nil {
		lc.record("reconcile %s: action: %s", cluster, framework.ErrString(err))
		return reconcile.Result{}, err
	}
	patch := client.MergeFromWithOptions(obj.DeepCopy(), client.MergeFromWithOptimisticLock{})
	if lc.role == roleInitializer {
		obj.Status.Initializers = slices.DeleteFunc(obj.Status.Initializers, func(i corev1alpha1.LogicalClusterInitializer) bool { return string(i) == lc.id })
	} else {
		obj.Status.Terminators = slices.DeleteFunc(obj.Status.Terminators, func(i corev1alpha1.LogicalClusterTerminator) bool { return string(i) == lc.id })
	}
	if err := c.Status().Patch(ctx, obj, patch); err != nil {
		lc.record("reconcile %s: PATCH %s/clusters/%s/apis/core.kcp.io/v1alpha1/logicalclusters/cluster/status removing %s: %s", cluster, lc.vwURL, cluster, lc.id, framework.ErrString(err))
		return reconcile.Result{}, err
	}
	lc.mu.Lock()
	lc.finished[cluster] = obj.Annotations[framework.PathAnnotation]
	lc.mu.Unlock()
	lc.record("reconcile %s: removed %s %s, now %s", cluster, lc.role, lc.id, describeLogicalCluster(obj))
	return reconcile.Result{}, nil
}

func (lc *lifecycleController) record(format string, args ...any) {
	if lc.closed.Load() {
		return
	}
	line := time.Now().Format("15:04:05.000") + " " + fmt.Sprintf(format, args...)
	lc.mu.Lock()
	defer lc.mu.Unlock()
	if len(lc.journal) >= 300 {
		lc.journal = lc.journal[1:]
	}
	lc.journal = append(lc.journal, line)
}

// finishedPaths returns the paths of the clusters the controller is done with.
func (lc *lifecycleController) finishedPaths() []string {
	lc.mu.Lock()
	defer lc.mu.Unlock()
	var out []string
	for _, p := range lc.finished {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// seenPaths returns the paths of every cluster the watch delivered.
func (lc *lifecycleController) seenPaths() []string {
	lc.mu.Lock()
	defer lc.mu.Unlock()
	var out []string
	for _, p := range lc.seen {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// report describes what the controller did, for failure messages.
func (lc *lifecycleController) report() string {
	lc.mu.Lock()
	defer lc.mu.Unlock()
	return fmt.Sprintf("%s controller for %s on %s/clusters/*: manager error=%v, clusters seen=%v, finished=%v, journal:\n  %s",
		lc.role, lc.id, lc.vwURL, lc.startErr, lc.seen, lc.finished, strings.Join(lc.journal, "\n  "))
}
