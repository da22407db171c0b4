package garbagecollector

import (
	"context"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/meshplane/meshplane/core/internal/clusters"
	"github.com/meshplane/meshplane/core/internal/registry/wildcard"
)

// Source is one resource type, watched once across every logical cluster.
type Source struct {
	// ID is the resource's identity across clusters: its storage prefix.
	ID string
	// GroupKind is the kind of the objects; empty to read it from each
	// object (custom resources, whose objects carry apiVersion and kind).
	GroupKind schema.GroupKind
	// Resource is the resource the objects are served as (for Changes).
	Resource schema.GroupResource
	Storage  wildcard.Storage
}

// watches runs one reflector per source. A reflector keeps no objects:
// its store is a sink that feeds the graph (see sink), so memory grows
// with dependents, not with objects or clusters.
type watches struct {
	mu      sync.Mutex
	running map[string]context.CancelFunc
	// listed holds the running sources whose first list is in.
	listed map[string]bool
}

// markListed records that source id's list is in the graph.
func (w *watches) markListed(id string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, ok := w.running[id]; ok {
		if w.listed == nil {
			w.listed = map[string]bool{}
		}
		w.listed[id] = true
	}
}

// synced reports whether every running source has listed: before, the
// graph may lack dependents, and orphaning or a foreground deletion must
// wait (a dependent missed would be deleted or left blocking).
func (w *watches) synced() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for id := range w.running {
		if !w.listed[id] {
			return false
		}
	}
	return len(w.running) > 0
}

// sync starts the sources not running yet and stops those no longer
// listed; it returns the IDs it stopped.
func (w *watches) sync(ctx context.Context, sources []Source, start func(ctx context.Context, s Source)) (stopped []string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.running == nil {
		w.running = map[string]context.CancelFunc{}
	}
	want := map[string]bool{}
	for _, s := range sources {
		want[s.ID] = true
		if _, ok := w.running[s.ID]; ok {
			continue
		}
		sctx, cancel := context.WithCancel(ctx)
		w.running[s.ID] = cancel
		go start(sctx, s)
	}
	for id, cancel := range w.running {
		if !want[id] {
			cancel()
			delete(w.running, id)
			delete(w.listed, id)
			stopped = append(stopped, id)
		}
	}
	return stopped
}

// watch lists and watches s in every cluster until ctx ends.
func (c *Controller) watch(ctx context.Context, s Source) {
	var example runtime.Object // any type: custom and built-in alike
	r := cache.NewReflectorWithOptions(wildcard.ListWatch(s.Storage), example, &sink{c: c, source: s},
		cache.ReflectorOptions{Name: "garbagecollector " + s.ID})
	r.RunWithContext(ctx)
}

// sink is the cache.Store of a source's reflector: it keeps nothing and
// hands every change to the controller.
type sink struct {
	c      *Controller
	source Source
}

func (s *sink) Add(obj any) error    { s.c.observe(s.source, obj, false); return nil }
func (s *sink) Update(obj any) error { s.c.observe(s.source, obj, false); return nil }
func (s *sink) Delete(obj any) error { s.c.observe(s.source, obj, true); return nil }
func (s *sink) Replace(list []any, _ string) error {
	s.c.replace(s.source, list)
	return nil
}
func (s *sink) List() []any                          { return nil }
func (s *sink) ListKeys() []string                   { return nil }
func (s *sink) Get(any) (any, bool, error)           { return nil, false, nil }
func (s *sink) GetByKey(string) (any, bool, error)   { return nil, false, nil }
func (s *sink) Bookmark(string)                      {}
func (s *sink) LastStoreSyncResourceVersion() string { return "" }
func (s *sink) Resync() error                        { return nil }

var _ cache.Store = &sink{}

// objectOf reads the identity of a stored object.
func objectOf(s Source, obj any) (object, metav1.Object, bool) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return object{}, nil, false
	}
	gk := s.GroupKind
	if gk.Empty() {
		if ro, ok := obj.(runtime.Object); ok {
			gk = ro.GetObjectKind().GroupVersionKind().GroupKind()
		}
	}
	if gk.Empty() {
		klog.V(4).InfoS("Object without kind", "source", s.ID, "name", m.GetName())
		return object{}, nil, false
	}
	return object{Cluster: m.GetAnnotations()[clusters.Annotation], GroupKind: gk.String(), Namespace: m.GetNamespace(),
		Name: m.GetName(), UID: m.GetUID()}, m, true
}
