// Package lifecycle runs an initializer or a terminator of a kcp
// WorkspaceType: it follows the LogicalClusters of the type's initializing
// (or terminating) virtual workspace and calls a handler once per cluster
// until the handler is done, then removes the initializer (terminator)
// from the LogicalCluster, which releases the workspace.
//
// Each cluster is handled on its own and retried with backoff, so one slow
// or broken workspace holds up no other.
package lifecycle

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	kcpcore "github.com/kcp-dev/sdk/apis/core"
	kcpcorev1alpha1 "github.com/kcp-dev/sdk/apis/core/v1alpha1"
	tenancyv1alpha1 "github.com/kcp-dev/sdk/apis/tenancy/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ClusterAnnotation names a LogicalCluster's cluster.
const ClusterAnnotation = "kcp.io/cluster"

// releaseAttempts bounds the retries of a release that conflicts.
const releaseAttempts = 5

// relist is how long one watch runs before the clusters are listed again.
const relist = 30 * time.Second

// Kind is initializing or terminating.
type Kind string

// The two lifecycle virtual workspaces.
const (
	Initializing Kind = "initializing"
	Terminating  Kind = "terminating"
)

// Handler does the work for one cluster through c (a client for the
// cluster in the virtual workspace). It returns done when the cluster can
// be released; otherwise it is called again after requeueAfter (or with
// backoff on an error).
type Handler func(ctx context.Context, c client.Client, cluster string, lc *kcpcorev1alpha1.LogicalCluster) (done bool, requeueAfter time.Duration, err error)

// Watcher runs one initializer or terminator.
type Watcher struct {
	Kind Kind
	// ID is the initializer (terminator), "<cluster of the type>:<type>",
	// e.g. "root:security".
	ID string
	// URL is the virtual workspace's URL from WorkspaceType.status.
	URL string
	// Config is the credential (its Host is replaced).
	Config *rest.Config
	Scheme *runtime.Scheme
	Handle Handler
	Log    logr.Logger
	// Workers is the number of clusters handled at once.
	Workers int
	// Mapper, when set, maps the kinds the handler uses for every
	// cluster's client; without it each handling discovers the cluster's
	// API (two discovery requests each time).
	Mapper meta.RESTMapper

	http *http.Client

	mu sync.Mutex
	q  workqueue.TypedRateLimitingInterface[string]
	// lcs are the latest LogicalClusters seen carrying the id (from the
	// list and watch), so handling one needs no GET of it.
	lcs map[string]*kcpcorev1alpha1.LogicalCluster
	// clients are the clients of the clusters in lcs, made at their first
	// handling and kept until the cluster is released.
	clients map[string]client.Client
	// released are the clusters this watcher released, and when: an
	// initializer (terminator) once removed never comes back, so a late
	// event or retry of a released cluster needs neither handling nor a
	// GET of its LogicalCluster (which the virtual workspace then refuses).
	released map[string]time.Time
}

// releasedFor is how long a released cluster is remembered: longer than
// any retry of it can be pending.
const releasedFor = 10 * time.Minute

// Requeue handles cluster again soon if it carries the id (e.g. when
// something the handler waits for appeared); other clusters are ignored.
func (w *Watcher) Requeue(cluster string) {
	w.mu.Lock()
	q, ok := w.q, w.lcs[cluster] != nil
	w.mu.Unlock()
	if q != nil && ok {
		q.Add(cluster)
	}
}

// seen records lc from the list or watch: kept while it carries the id.
func (w *Watcher) seen(cluster string, lc *kcpcorev1alpha1.LogicalCluster, deleted bool) bool {
	carries := !deleted && w.carries(lc)
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, done := w.released[cluster]; done {
		// An event from before the release.
		carries = false
	}
	if carries {
		w.lcs[cluster] = lc
	} else {
		delete(w.lcs, cluster)
		delete(w.clients, cluster)
	}
	return carries
}

// Path returns the workspace path (kcp.io/path) of a cluster the watcher
// follows, from the LogicalCluster its list or watch delivered.
func (w *Watcher) Path(cluster string) (string, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if lc := w.lcs[cluster]; lc != nil && lc.Annotations[PathAnnotation] != "" {
		return lc.Annotations[PathAnnotation], true
	}
	return "", false
}

// PathAnnotation is kcp's annotation of a LogicalCluster's workspace path.
const PathAnnotation = kcpcore.LogicalClusterPathAnnotationKey

// cached returns a copy of the latest LogicalCluster seen for cluster.
func (w *Watcher) cached(cluster string) *kcpcorev1alpha1.LogicalCluster {
	w.mu.Lock()
	defer w.mu.Unlock()
	if lc := w.lcs[cluster]; lc != nil {
		return lc.DeepCopy()
	}
	return nil
}

// forget drops the cached LogicalCluster (stale after a failed write).
func (w *Watcher) forget(cluster string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.lcs, cluster)
}

// release records that the cluster is released: it is followed no more.
func (w *Watcher) release(cluster string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.lcs, cluster)
	delete(w.clients, cluster)
	w.released[cluster] = time.Now()
}

// isReleased reports a cluster this watcher released.
func (w *Watcher) isReleased(cluster string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	_, ok := w.released[cluster]
	return ok
}

// clientFor returns the cluster's client, made once while it is followed.
func (w *Watcher) clientFor(cluster string) (client.Client, error) {
	w.mu.Lock()
	c := w.clients[cluster]
	w.mu.Unlock()
	if c != nil {
		return c, nil
	}
	c, err := client.New(w.configFor(cluster), client.Options{Scheme: w.Scheme, HTTPClient: w.http, Mapper: w.Mapper})
	if err != nil {
		return nil, err
	}
	w.mu.Lock()
	if w.lcs[cluster] != nil {
		w.clients[cluster] = c
	}
	w.mu.Unlock()
	return c, nil
}

func (w *Watcher) configFor(cluster string) *rest.Config {
	c := rest.CopyConfig(w.Config)
	c.Host = strings.TrimSuffix(w.URL, "/") + "/clusters/" + cluster
	return c
}

// carries reports whether lc still waits for the watcher.
func (w *Watcher) carries(lc *kcpcorev1alpha1.LogicalCluster) bool {
	if w.Kind == Initializing {
		return slices.Contains(lc.Status.Initializers, kcpcorev1alpha1.LogicalClusterInitializer(w.ID))
	}
	return lc.DeletionTimestamp != nil && slices.Contains(lc.Status.Terminators, kcpcorev1alpha1.LogicalClusterTerminator(w.ID))
}

// Run handles clusters until ctx ends.
func (w *Watcher) Run(ctx context.Context) error {
	hc, err := rest.HTTPClientFor(w.configFor("*"))
	if err != nil {
		return fmt.Errorf("%s %s: HTTP client for %s: %w", w.Kind, w.ID, w.URL, err)
	}
	w.http = hc
	wild, err := client.NewWithWatch(w.configFor("*"), client.Options{Scheme: w.Scheme, HTTPClient: hc})
	if err != nil {
		return fmt.Errorf("%s %s: client for %s: %w", w.Kind, w.ID, w.URL, err)
	}
	q := workqueue.NewTypedRateLimitingQueueWithConfig(
		workqueue.NewTypedItemExponentialFailureRateLimiter[string](250*time.Millisecond, 30*time.Second),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: string(w.Kind) + "-" + w.ID})
	w.mu.Lock()
	w.q, w.lcs = q, map[string]*kcpcorev1alpha1.LogicalCluster{}
	w.clients, w.released = map[string]client.Client{}, map[string]time.Time{}
	w.mu.Unlock()
	go func() {
		<-ctx.Done()
		q.ShutDown()
	}()
	for range max(w.Workers, 1) {
		go func() {
			for w.work(ctx, q) {
			}
		}()
	}
	w.Log.Info("following the virtual workspace", "kind", w.Kind, "id", w.ID, "url", w.URL)
	for ctx.Err() == nil {
		if err := w.listWatch(ctx, wild, q); err != nil && ctx.Err() == nil {
			w.Log.Error(err, "listing/watching logical clusters; retrying")
			select {
			case <-ctx.Done():
			case <-time.After(2 * time.Second):
			}
		}
	}
	return nil
}

// listWatch lists the clusters, queues those that carry the id, and then
// follows a watch until it ends.
func (w *Watcher) listWatch(ctx context.Context, wild client.WithWatch, q workqueue.TypedRateLimitingInterface[string]) error {
	list := &kcpcorev1alpha1.LogicalClusterList{}
	if err := wild.List(ctx, list); err != nil {
		return err
	}
	listed := map[string]bool{}
	for i := range list.Items {
		if c := list.Items[i].Annotations[ClusterAnnotation]; c != "" && w.seen(c, &list.Items[i], false) {
			listed[c] = true
			q.Add(c)
		}
	}
	w.mu.Lock()
	for c := range w.lcs {
		if !listed[c] {
			delete(w.lcs, c)
			delete(w.clients, c)
		}
	}
	for c, at := range w.released {
		if time.Since(at) > releasedFor {
			delete(w.released, c)
		}
	}
	w.mu.Unlock()
	wctx, cancel := context.WithTimeout(ctx, relist)
	defer cancel()
	// The watch starts "now": the core's wildcard lists and its watch
	// cache do not share resourceVersions. What changes between the list
	// and the watch is caught by the next list, at most relist later.
	wi, err := wild.Watch(wctx, &kcpcorev1alpha1.LogicalClusterList{})
	if err != nil {
		return err
	}
	defer wi.Stop()
	for ev := range wi.ResultChan() {
		if ev.Type == watch.Error {
			return fmt.Errorf("watch: %v", apierrors.FromObject(ev.Object))
		}
		lc, ok := ev.Object.(*kcpcorev1alpha1.LogicalCluster)
		if !ok {
			continue
		}
		if c := lc.Annotations[ClusterAnnotation]; c != "" && w.seen(c, lc, ev.Type == watch.Deleted) {
			q.Add(c)
		}
	}
	return nil
}

func (w *Watcher) work(ctx context.Context, q workqueue.TypedRateLimitingInterface[string]) bool {
	cluster, shutdown := q.Get()
	if shutdown {
		return false
	}
	defer q.Done(cluster)
	log := w.Log.WithValues("cluster", cluster, string(w.Kind), w.ID)
	after, err := w.handle(logr.NewContext(ctx, log), cluster)
	switch {
	case err != nil:
		log.Info("not done yet", "reason", err.Error())
		q.AddRateLimited(cluster)
	case after > 0:
		q.Forget(cluster)
		q.AddAfter(cluster, after)
	default:
		q.Forget(cluster)
	}
	return true
}

// handle runs the handler for one cluster and releases it when done.
func (w *Watcher) handle(ctx context.Context, cluster string) (time.Duration, error) {
	if w.isReleased(cluster) {
		// A retry or event queued before the release.
		return 0, nil
	}
	c, err := w.clientFor(cluster)
	if err != nil {
		return 0, err
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	// The latest LogicalCluster the watch saw; read when there is none
	// (it is read again after a write failed).
	lc := w.cached(cluster)
	if lc == nil {
		if lc, err = getLogicalCluster(ctx, c); err != nil || lc == nil {
			return 0, err
		}
	}
	if !w.carries(lc) {
		return 0, nil
	}
	done, after, err := w.Handle(ctx, c, cluster, lc)
	if err != nil {
		return 0, err
	}
	if !done {
		return max(after, time.Second), nil
	}
	// Other initializers (terminators) are removed concurrently: on a
	// conflict the LogicalCluster is read again and the release retried at
	// once, without running the handler again.
	for attempt := 1; ; attempt++ {
		if w.Kind == Initializing {
			lc.Status.Initializers = slices.DeleteFunc(lc.Status.Initializers, func(i kcpcorev1alpha1.LogicalClusterInitializer) bool { return string(i) == w.ID })
		} else {
			lc.Status.Terminators = slices.DeleteFunc(lc.Status.Terminators, func(i kcpcorev1alpha1.LogicalClusterTerminator) bool { return string(i) == w.ID })
		}
		err := c.Status().Update(ctx, lc)
		if err == nil {
			w.release(cluster)
			break
		}
		if apierrors.IsNotFound(err) || apierrors.IsForbidden(err) {
			// Gone, or no longer initializing (terminating).
			w.release(cluster)
			return 0, nil
		}
		w.forget(cluster)
		if !apierrors.IsConflict(err) || attempt == releaseAttempts {
			return 0, fmt.Errorf("releasing the workspace: %w", err)
		}
		if lc, err = getLogicalCluster(ctx, c); err != nil || lc == nil || !w.carries(lc) {
			return 0, err
		}
	}
	logr.FromContextOrDiscard(ctx).Info("released")
	return 0, nil
}

// getLogicalCluster reads the workspace's LogicalCluster; nil when it is
// gone or no longer readable (released already): nothing left to do.
func getLogicalCluster(ctx context.Context, c client.Client) (*kcpcorev1alpha1.LogicalCluster, error) {
	lc := &kcpcorev1alpha1.LogicalCluster{}
	if err := c.Get(ctx, client.ObjectKey{Name: "cluster"}, lc); err != nil {
		if apierrors.IsNotFound(err) || apierrors.IsForbidden(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("getting the LogicalCluster: %w", err)
	}
	return lc, nil
}

// URLsOf waits until WorkspaceType name in the cluster c points at lists
// the virtual workspaces of kind in its status, and returns their URLs:
// one per shard of the install, each serving that shard's workspaces (run
// a Watcher on each).
func URLsOf(ctx context.Context, c client.Client, name string, kind Kind) ([]string, error) {
	for {
		wt := &tenancyv1alpha1.WorkspaceType{}
		err := c.Get(ctx, client.ObjectKey{Name: name}, wt)
		if err == nil {
			var urls []string
			for _, vw := range wt.Status.VirtualWorkspaces {
				if string(vw.Type) == string(kind) || strings.Contains(vw.URL, "/"+string(kind)+"workspaces/") {
					urls = append(urls, vw.URL)
				}
			}
			if len(urls) > 0 {
				return urls, nil
			}
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("WorkspaceType %s lists no %s virtual workspace (last error: %v): %w", name, kind, err, ctx.Err())
		case <-time.After(time.Second):
		}
	}
}
