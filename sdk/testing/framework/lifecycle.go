package framework

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	corev1alpha1 "github.com/kcp-dev/sdk/apis/core/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/workqueue"
)

// PathAnnotation is the workspace path kcp puts on every LogicalCluster.
const PathAnnotation = "kcp.io/path"

// LifecycleRole says whether a LifecycleController initializes or
// terminates workspaces.
type LifecycleRole string

// The two lifecycle roles.
const (
	Initializer LifecycleRole = "initializer"
	Terminator  LifecycleRole = "terminator"
)

// LifecycleAction is the work done in one logical cluster before the
// controller removes its initializer (or terminator). cfg talks to
// <virtual workspace URL>/clusters/<cluster>.
type LifecycleAction func(ctx context.Context, cfg *rest.Config, lc *corev1alpha1.LogicalCluster) error

// LifecycleController is a workspace initializer or terminator on a
// WorkspaceType's initializing or terminating virtual workspace, written
// with client-go only: it lists and watches LogicalClusters at
// <vw url>/clusters/*, and for each cluster carrying its id runs the action
// through <vw url>/clusters/<cluster>, then removes the id from
// status.initializers (or status.terminators) with an optimistically locked
// status patch. Its id is <cluster of the type>:<type name>, e.g. root:my-type.
type LifecycleController struct {
	role   LifecycleRole
	id     string
	vwURL  string
	cfg    *rest.Config
	action LifecycleAction

	queue  workqueue.TypedRateLimitingInterface[string]
	cancel context.CancelFunc
	done   sync.WaitGroup

	mu       sync.Mutex
	seen     map[string]string // cluster -> path, every cluster the watch delivered
	finished map[string]string // cluster -> path, clusters whose id was removed
	journal  []string
}

// StartLifecycleController starts a controller for the initializer or
// terminator id on the lifecycle virtual workspace at vwURL (from the
// WorkspaceType's status.virtualWorkspaces), authenticating as cfg does.
// Stop it with Stop.
func StartLifecycleController(role LifecycleRole, id, vwURL string, cfg *rest.Config, action LifecycleAction) (*LifecycleController, error) {
	if role != Initializer && role != Terminator {
		return nil, fmt.Errorf("unknown lifecycle role %q", role)
	}
	c := &LifecycleController{
		role: role, id: id, vwURL: strings.TrimSuffix(vwURL, "/"), cfg: rest.CopyConfig(cfg), action: action,
		queue: workqueue.NewTypedRateLimitingQueue(workqueue.NewTypedItemExponentialFailureRateLimiter[string](100*time.Millisecond, 2*time.Second)),
		seen:  map[string]string{}, finished: map[string]string{},
	}
	wildcard, err := dynamic.NewForConfig(VirtualWorkspaceConfig(c.cfg, c.vwURL, "*"))
	if err != nil {
		return nil, fmt.Errorf("client for %s/clusters/*: %w", c.vwURL, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	c.cancel = cancel
	c.done.Add(3)
	go func() {
		defer c.done.Done()
		c.listWatch(ctx, wildcard.Resource(LogicalClusterGVR))
	}()
	for range 2 {
		go func() {
			defer c.done.Done()
			for c.processNext(ctx) {
			}
		}()
	}
	return c, nil
}

// RunLifecycleController is StartLifecycleController for a test: it fails
// the test on error, stops when the test ends and logs Report if the test
// failed.
func RunLifecycleController(t testing.TB, role LifecycleRole, id, vwURL string, cfg *rest.Config, action LifecycleAction) *LifecycleController {
	t.Helper()
	c, err := StartLifecycleController(role, id, vwURL, cfg, action)
	if err != nil {
		t.Fatalf("starting the %s controller for %s: %v", role, id, err)
	}
	t.Cleanup(func() {
		c.Stop()
		if t.Failed() {
			t.Logf("%s", c.Report())
		}
	})
	t.Logf("started %s controller for %s on %s/clusters/*", role, id, vwURL)
	return c
}

// Stop stops the controller and waits for its goroutines.
func (c *LifecycleController) Stop() {
	c.cancel()
	c.queue.ShutDown()
	c.done.Wait()
}

// listWatch lists the LogicalClusters of the virtual workspace, then
// watches from the list's resourceVersion, and starts over when the watch
// ends, until ctx is done.
func (c *LifecycleController) listWatch(ctx context.Context, lcs dynamic.ResourceInterface) {
	for ctx.Err() == nil {
		list, err := lcs.List(ctx, metav1.ListOptions{})
		if err != nil {
			c.record("list %s/clusters/*: %s", c.vwURL, ErrString(err))
			sleepCtx(ctx, time.Second)
			continue
		}
		c.record("list: %d logicalclusters at resourceVersion %s", len(list.Items), list.GetResourceVersion())
		for i := range list.Items {
			c.observe(&list.Items[i])
		}
		w, err := lcs.Watch(ctx, metav1.ListOptions{ResourceVersion: list.GetResourceVersion(), AllowWatchBookmarks: true})
		if err != nil {
			c.record("watch %s/clusters/*: %s", c.vwURL, ErrString(err))
			sleepCtx(ctx, time.Second)
			continue
		}
		c.consume(ctx, w)
		w.Stop()
	}
}

// consume handles the events of one watch until it ends.
func (c *LifecycleController) consume(ctx context.Context, w watch.Interface) {
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-w.ResultChan():
			if !ok {
				c.record("watch: closed by the server, listing again")
				return
			}
			switch ev.Type {
			case watch.Added, watch.Modified:
				if u, ok := ev.Object.(*unstructured.Unstructured); ok {
					c.observe(u)
				}
			case watch.Error:
				c.record("watch: error event %v, listing again", apierrors.FromObject(ev.Object))
				return
			}
		}
	}
}

// observe queues the cluster of a LogicalCluster that carries the id.
func (c *LifecycleController) observe(u *unstructured.Unstructured) {
	lc, err := toLogicalCluster(u)
	if err != nil {
		c.record("decoding a LogicalCluster: %v", err)
		return
	}
	cluster := lc.Annotations[ClusterAnnotation]
	c.mu.Lock()
	c.seen[cluster] = lc.Annotations[PathAnnotation]
	c.mu.Unlock()
	c.record("observed %s", DescribeLogicalCluster(lc))
	if cluster != "" && c.carries(lc) {
		c.queue.Add(cluster)
	}
}

func (c *LifecycleController) processNext(ctx context.Context) bool {
	cluster, shutdown := c.queue.Get()
	if shutdown {
		return false
	}
	defer c.queue.Done(cluster)
	if err := c.reconcile(ctx, cluster); err != nil {
		c.record("reconcile %s: %s (retrying)", cluster, ErrString(err))
		c.queue.AddRateLimited(cluster)
		return true
	}
	c.queue.Forget(cluster)
	return true
}

func (c *LifecycleController) reconcile(ctx context.Context, cluster string) error {
	c.mu.Lock()
	_, done := c.finished[cluster]
	c.mu.Unlock()
	cfg := VirtualWorkspaceConfig(c.cfg, c.vwURL, cluster)
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	lcs := dyn.Resource(LogicalClusterGVR)
	u, err := lcs.Get(ctx, corev1alpha1.LogicalClusterName, metav1.GetOptions{})
	if err != nil {
		if done && (apierrors.IsForbidden(err) || apierrors.IsNotFound(err)) {
			return nil // expected: the cluster left the virtual workspace when we were done
		}
		return fmt.Errorf("getting the LogicalCluster: %w", err)
	}
	lc, err := toLogicalCluster(u)
	if err != nil {
		return err
	}
	if !c.carries(lc) {
		return nil
	}
	if err := c.action(ctx, cfg, lc); err != nil {
		return fmt.Errorf("action: %w", err)
	}
	status := map[string]any{}
	if c.role == Initializer {
		status["initializers"] = nonNil(slices.DeleteFunc(slices.Clone(lc.Status.Initializers), func(i corev1alpha1.LogicalClusterInitializer) bool { return string(i) == c.id }))
	} else {
		status["terminators"] = nonNil(slices.DeleteFunc(slices.Clone(lc.Status.Terminators), func(i corev1alpha1.LogicalClusterTerminator) bool { return string(i) == c.id }))
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"resourceVersion": lc.ResourceVersion}, "status": status})
	if err != nil {
		return err
	}
	if _, err := lcs.Patch(ctx, corev1alpha1.LogicalClusterName, types.MergePatchType, patch, metav1.PatchOptions{}, "status"); err != nil {
		return fmt.Errorf("removing %s %s with a status patch: %w", c.role, c.id, err)
	}
	c.mu.Lock()
	c.finished[cluster] = lc.Annotations[PathAnnotation]
	c.mu.Unlock()
	c.record("reconcile %s: removed %s %s", cluster, c.role, c.id)
	return nil
}

// carries reports whether the LogicalCluster still has the controller's id.
func (c *LifecycleController) carries(lc *corev1alpha1.LogicalCluster) bool {
	if c.role == Initializer {
		return slices.Contains(lc.Status.Initializers, corev1alpha1.LogicalClusterInitializer(c.id))
	}
	return slices.Contains(lc.Status.Terminators, corev1alpha1.LogicalClusterTerminator(c.id))
}

func (c *LifecycleController) record(format string, args ...any) {
	line := time.Now().Format("15:04:05.000") + " " + fmt.Sprintf(format, args...)
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.journal) >= 300 {
		c.journal = c.journal[1:]
	}
	c.journal = append(c.journal, line)
}

// FinishedPaths returns the sorted paths of the clusters the controller is
// done with.
func (c *LifecycleController) FinishedPaths() []string { return c.paths(c.finished) }

// SeenPaths returns the sorted paths of every cluster the watch delivered.
func (c *LifecycleController) SeenPaths() []string { return c.paths(c.seen) }

func (c *LifecycleController) paths(m map[string]string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, p := range m {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// Report describes what the controller did, for failure messages.
func (c *LifecycleController) Report() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return fmt.Sprintf("%s controller for %s on %s/clusters/*: clusters seen=%v, finished=%v, journal:\n  %s",
		c.role, c.id, c.vwURL, c.seen, c.finished, strings.Join(c.journal, "\n  "))
}

// DescribeLogicalCluster summarizes a LogicalCluster for failure messages.
func DescribeLogicalCluster(lc *corev1alpha1.LogicalCluster) string {
	del := ""
	if lc.DeletionTimestamp != nil {
		del = " deleting"
	}
	return fmt.Sprintf("logicalcluster of %s (cluster %s): phase=%q initializers=%v (spec %v) terminators=%v (spec %v)%s",
		lc.Annotations[PathAnnotation], lc.Annotations[ClusterAnnotation], lc.Status.Phase,
		lc.Status.Initializers, lc.Spec.Initializers, lc.Status.Terminators, lc.Spec.Terminators, del)
}

func toLogicalCluster(u *unstructured.Unstructured) (*corev1alpha1.LogicalCluster, error) {
	lc := &corev1alpha1.LogicalCluster{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, lc); err != nil {
		return nil, fmt.Errorf("decoding LogicalCluster %s: %w", u.GetName(), err)
	}
	return lc, nil
}

// nonNil keeps an empty list an empty JSON list (a merge patch with null
// would delete the field rather than set it empty).
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func sleepCtx(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}
