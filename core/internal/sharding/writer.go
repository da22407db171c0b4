package sharding

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	kcpcache "github.com/kcp-dev/apimachinery/v2/pkg/cache"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	"github.com/meshplane/meshplane/core/internal/cacheserver"
)

// Writer copies this shard's objects of the CacheKinds to the cache
// server, from the shard's own informers (no extra watch): every object
// of the replicated kinds, and the ClusterRoles and ClusterRoleBindings
// of the clusters that hold an APIExport. Each change of a cluster's
// objects reconciles that cluster: what is there is written (create or
// replace) unless the cache has it at the same resourceVersion, and what
// is gone is deleted.
//
// It is level-based: every ResyncPeriod (and at start) it lists what the
// cache holds of its shard (metadata only) and reconciles every cluster
// whose copies differ from the informers, so a lost event, a copy swept
// or deleted behind its back, or a cache server that lost its data heals
// within a period, not only at the next change.
type Writer struct {
	self  string
	base  string
	http  *http.Client
	local map[schema.GroupVersionResource]cache.SharedIndexInformer
	queue workqueue.TypedRateLimitingInterface[string]
	// written is what the writer believes the cache holds: by kind,
	// cluster and name, the source resourceVersion. Only the worker uses
	// it.
	written map[schema.GroupVersionResource]map[string]map[string]string
	// ResyncPeriod is how often the writer compares the cache with its
	// informers (resyncPeriod unless set before Run).
	ResyncPeriod time.Duration
}

// resyncPeriod is the writer's default ResyncPeriod: one metadata list per
// kind of the shard's own copies.
const resyncPeriod = 10 * time.Second

// resyncKey is the queue item of a full resync (no cluster is named "").
const resyncKey = ""

// NewWriter builds the writer of shard self to the cache server at cfg
// (host ending in /services/cache); local has an informer of every
// CacheKind. It adds a cluster index to the informers: call it before
// they start.
func NewWriter(self string, cfg *rest.Config, local map[schema.GroupVersionResource]cache.SharedIndexInformer) (*Writer, error) {
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, err
	}
	w := &Writer{self: self, base: cfg.Host + "/shards/" + url.PathEscape(self) + "/clusters/", http: hc, local: local,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.NewTypedItemExponentialFailureRateLimiter[string](100*time.Millisecond, 10*time.Second),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "cache-writer"}),
		written: map[schema.GroupVersionResource]map[string]map[string]string{}, ResyncPeriod: resyncPeriod}
	for _, kind := range CacheKinds {
		inf, ok := local[kind.GVR]
		if !ok {
			return nil, fmt.Errorf("no informer of %s for the cache writer", kind.GVR)
		}
		if _, ok := inf.GetIndexer().GetIndexers()[kcpcache.ClusterIndexName]; !ok {
			if err := inf.AddIndexers(cache.Indexers{kcpcache.ClusterIndexName: kcpcache.ClusterIndexFunc}); err != nil {
				return nil, err
			}
		}
		w.written[kind.GVR] = map[string]map[string]string{}
		_, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    w.enqueue,
			UpdateFunc: func(_, obj any) { w.enqueue(obj) },
			DeleteFunc: w.enqueue,
		})
		if err != nil {
			return nil, err
		}
	}
	return w, nil
}

func (w *Writer) enqueue(obj any) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return
	}
	if c := m.GetAnnotations()[clusterAnnotation]; c != "" {
		w.queue.Add(c)
	}
}

// Run writes until ctx ends.
func (w *Writer) Run(ctx context.Context) {
	defer utilruntime.HandleCrash()
	defer w.queue.ShutDown()
	log := klog.FromContext(ctx).WithValues("controller", "cache-writer")
	synced := make([]cache.InformerSynced, 0, len(w.local))
	for _, inf := range w.local {
		synced = append(synced, inf.HasSynced)
	}
	if !cache.WaitForCacheSync(ctx.Done(), synced...) {
		return
	}
	// What the cache holds of this shard against the informers, until the
	// cache server answers; then the worker, and a resync every period.
	_ = wait.PollUntilContextCancel(ctx, time.Second, true, func(ctx context.Context) (bool, error) {
		n, err := w.resync(ctx)
		if err != nil {
			log.Info("Cannot list this shard's objects in the cache server yet", "err", err.Error())
			return false, nil
		}
		log.V(2).Info("Writing this shard's shared objects to the cache server", "clusters", n)
		return true, nil
	})
	if ctx.Err() != nil {
		return
	}
	go wait.UntilWithContext(ctx, w.work, time.Second)
	go wait.JitterUntilWithContext(ctx, func(context.Context) { w.queue.Add(resyncKey) }, w.ResyncPeriod, 0.1, false)
	<-ctx.Done()
}

func (w *Writer) work(ctx context.Context) {
	for {
		cluster, quit := w.queue.Get()
		if quit {
			return
		}
		var err error
		if cluster == resyncKey {
			var n int
			if n, err = w.resync(ctx); n > 0 {
				klog.FromContext(ctx).Info("The cache server's copies differed from this shard's objects; rewriting them", "clusters", n)
			}
		} else {
			err = w.reconcile(ctx, cluster)
		}
		if err != nil {
			klog.FromContext(ctx).Info("Cannot write to the cache server, retrying", "cluster", cluster, "err", err.Error())
			w.queue.AddRateLimited(cluster)
		} else {
			w.queue.Forget(cluster)
		}
		w.queue.Done(cluster)
	}
}

// writeOrder writes RBAC before exports: a reader that sees a cluster's
// export finds its RBAC.
var writeOrder = append(append([]Kind{}, RBACKinds...), replicated...)

// reconcile makes the cache hold a cluster's objects as they are here.
func (w *Writer) reconcile(ctx context.Context, cluster string) error {
	exports, err := w.local[APIExports.GVR].GetIndexer().ByIndex(kcpcache.ClusterIndexName, cluster)
	if err != nil {
		return err
	}
	for _, kind := range writeOrder {
		desired, err := w.desired(kind, cluster, len(exports) > 0)
		if err != nil {
			return err
		}
		have := w.written[kind.GVR][cluster]
		for name, obj := range desired {
			m, _ := meta.Accessor(obj)
			if rv := m.GetResourceVersion(); have != nil && have[name] == rv && rv != "" {
				continue
			}
			if err := w.put(ctx, kind, cluster, name, obj); err != nil {
				return err
			}
			if have == nil {
				have = map[string]string{}
				w.written[kind.GVR][cluster] = have
			}
			have[name] = m.GetResourceVersion()
		}
		for name := range have {
			if _, ok := desired[name]; ok {
				continue
			}
			if err := w.delete(ctx, kind, cluster, name); err != nil {
				return err
			}
			delete(have, name)
		}
		if len(have) == 0 {
			delete(w.written[kind.GVR], cluster)
		}
	}
	return nil
}

// desired are the objects of kind in a cluster that the cache should hold,
// by name: the RBAC kinds of export clusters only.
func (w *Writer) desired(kind Kind, cluster string, hasExports bool) (map[string]runtime.Object, error) {
	desired := map[string]runtime.Object{}
	if isRBAC(kind) && !hasExports {
		return desired, nil
	}
	objs, err := w.local[kind.GVR].GetIndexer().ByIndex(kcpcache.ClusterIndexName, cluster)
	if err != nil {
		return nil, err
	}
	for _, o := range objs {
		obj, ok := o.(runtime.Object)
		if !ok {
			continue
		}
		if m, err := meta.Accessor(obj); err == nil {
			desired[m.GetName()] = obj
		}
	}
	return desired, nil
}

// resync reads what the cache holds of this shard and queues every
// cluster whose copies differ from the informers (missing, stale, or no
// longer here); it reports how many.
func (w *Writer) resync(ctx context.Context) (int, error) {
	if err := w.listWritten(ctx); err != nil {
		return 0, err
	}
	clusters := map[string]bool{}
	for _, byCluster := range w.written {
		for c := range byCluster {
			clusters[c] = true
		}
	}
	for _, inf := range w.local {
		for _, c := range inf.GetIndexer().ListIndexFuncValues(kcpcache.ClusterIndexName) {
			clusters[c] = true
		}
	}
	n := 0
	for c := range clusters {
		same, err := w.inCache(c)
		if err != nil {
			return n, err
		}
		if !same {
			w.queue.Add(c)
			n++
		}
	}
	return n, nil
}

// inCache reports whether the cache holds a cluster's objects as they are
// here (by name and resourceVersion).
func (w *Writer) inCache(cluster string) (bool, error) {
	exports, err := w.local[APIExports.GVR].GetIndexer().ByIndex(kcpcache.ClusterIndexName, cluster)
	if err != nil {
		return false, err
	}
	for _, kind := range writeOrder {
		desired, err := w.desired(kind, cluster, len(exports) > 0)
		if err != nil {
			return false, err
		}
		have := w.written[kind.GVR][cluster]
		if len(have) != len(desired) {
			return false, nil
		}
		for name, obj := range desired {
			m, _ := meta.Accessor(obj)
			if rv, ok := have[name]; !ok || rv != m.GetResourceVersion() {
				return false, nil
			}
		}
	}
	return true, nil
}

func isRBAC(k Kind) bool { return k.GVR.Group == ClusterRoles.GVR.Group }

func (w *Writer) path(kind Kind, cluster string) string {
	return w.base + url.PathEscape(cluster) + "/apis/" + kind.GVR.Group + "/" + kind.GVR.Version + "/" + kind.GVR.Resource
}

// put writes an object: as stored here, with its kind, without
// resourceVersion and managed fields, its resourceVersion here in an
// annotation.
func (w *Writer) put(ctx context.Context, kind Kind, cluster, name string, obj runtime.Object) error {
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return err
	}
	u["apiVersion"] = kind.GVR.GroupVersion().String()
	u["kind"] = kind.KindName()
	m, _ := u["metadata"].(map[string]any)
	if m == nil {
		return fmt.Errorf("%s %s|%s without metadata", kind.GVR.Resource, cluster, name)
	}
	ann, _ := m["annotations"].(map[string]any)
	if ann == nil {
		ann = map[string]any{}
	}
	ann[cacheserver.SourceVersionAnnotation] = m["resourceVersion"]
	m["annotations"] = ann
	delete(m, "resourceVersion")
	delete(m, "managedFields")
	body, err := json.Marshal(u)
	if err != nil {
		return err
	}
	return w.do(ctx, http.MethodPut, w.path(kind, cluster)+"/"+url.PathEscape(name), body, nil)
}

func (w *Writer) delete(ctx context.Context, kind Kind, cluster, name string) error {
	err := w.do(ctx, http.MethodDelete, w.path(kind, cluster)+"/"+url.PathEscape(name), nil, nil)
	if se, ok := err.(*statusError); ok && se.code == http.StatusNotFound {
		return nil
	}
	return err
}

// listWritten reads what the cache holds of this shard.
func (w *Writer) listWritten(ctx context.Context) error {
	for _, kind := range CacheKinds {
		var list struct {
			Items []struct {
				Metadata struct {
					Name        string            `json:"name"`
					Annotations map[string]string `json:"annotations"`
				} `json:"metadata"`
			} `json:"items"`
		}
		if err := w.request(ctx, http.MethodGet, w.path(kind, "*"), cacheserver.MetadataListAccept, nil, &list); err != nil {
			return err
		}
		byCluster := map[string]map[string]string{}
		for _, it := range list.Items {
			c := it.Metadata.Annotations[cacheserver.ClusterAnnotation]
			if byCluster[c] == nil {
				byCluster[c] = map[string]string{}
			}
			byCluster[c][it.Metadata.Name] = it.Metadata.Annotations[cacheserver.SourceVersionAnnotation]
		}
		w.written[kind.GVR] = byCluster
	}
	return nil
}

type statusError struct {
	code int
	body string
}

func (e *statusError) Error() string {
	return fmt.Sprintf("cache server answered %d: %s", e.code, e.body)
}

// requestTimeout bounds one request to the cache server: a stuck one
// must not hold the writer.
const requestTimeout = 10 * time.Second

func (w *Writer) do(ctx context.Context, method, u string, body []byte, out any) error {
	return w.request(ctx, method, u, "", body, out)
}

func (w *Writer) request(ctx context.Context, method, u, accept string, body []byte, out any) error {
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, u, bytes.NewReader(body))
	if err != nil {
		return err
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := w.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return &statusError{code: resp.StatusCode, body: string(b)}
	}
	if out != nil {
		return json.Unmarshal(b, out)
	}
	return nil
}
