package garbagecollector

import (
	"context"
	"maps"
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
	// GroupKind is the kind of the objects; of custom resources, the kind
	// of the CRD the source was made from.
	GroupKind schema.GroupKind
	// KindPerObject reads each object's kind from the object (custom
	// resources: another cluster's CRD of the same storage prefix may
	// name another kind).
	KindPerObject bool
	// Resource is the resource the objects are served as (for Changes).
	Resource schema.GroupResource
	Storage  wildcard.Storage
}

// MakeSource makes a source about to be watched.
type MakeSource func() (Source, error)

// watches runs one reflector per source needed by some holder (the
// built-in types, a logical cluster's custom and bound types). A
// reflector keeps no objects: its store is a sink that feeds the graph
// (see sink), so memory grows with dependents, not with objects or
// clusters.
type watches struct {
	mu      sync.Mutex
	held    map[string]map[string]bool // holder -> source IDs
	running map[string]*run
}

// clusterSet is a set of logical clusters; nil stands for every cluster.
type clusterSet map[string]bool

// run is one watched source.
type run struct {
	// holders need it: Builtin, or the clusters serving its type.
	holders map[string]bool
	cancel  context.CancelFunc
	// listed: its first list is in the graph.
	listed bool
}

// markListed records that r's list is in the graph.
func (w *watches) markListed(r *run) {
	w.mu.Lock()
	defer w.mu.Unlock()
	r.listed = true
}

// synced reports whether every running source has listed: before, the
// graph may lack dependents, and orphaning or a foreground deletion must
// wait (a dependent missed would be deleted or left blocking).
func (w *watches) synced() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, r := range w.running {
		if !r.listed {
			return false
		}
	}
	return len(w.running) > 0
}

// serves lists the clusters whose objects of its type r's lists hold:
// every cluster for a built-in type, else the clusters holding it.
func (w *watches) serves(r *run) clusterSet {
	w.mu.Lock()
	defer w.mu.Unlock()
	if r.holders[Builtin] {
		return nil
	}
	in := make(clusterSet, len(r.holders))
	maps.Copy(in, r.holders)
	return in
}

// watching reports whether source id is watched for cluster's objects:
// a change of them reaches the graph, or a list catches up with it.
func (w *watches) watching(id, cluster string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	r := w.running[id]
	return r != nil && (r.holders[Builtin] || r.holders[cluster])
}

// hold makes holder need exactly the sources of want: it starts those no
// holder needed yet (making them first; one that fails to make is not
// held, and the holder's next hold tries again) and stops those no holder
// needs any more, whose IDs it returns. Only one hold runs at a time.
func (w *watches) hold(ctx context.Context, holder string, want map[string]MakeSource,
	start func(ctx context.Context, s Source, r *run)) (stopped []string) {
	w.mu.Lock()
	old := w.held[holder]
	var missing []string
	for id := range want {
		if !old[id] && w.running[id] == nil {
			missing = append(missing, id)
		}
	}
	w.mu.Unlock()

	// Making a source may build a registry: not under the lock.
	made := map[string]Source{}
	for _, id := range missing {
		s, err := want[id]()
		if err != nil {
			klog.V(2).InfoS("Not collecting a resource yet", "source", id, "holder", holder, "err", err)
			continue
		}
		made[id] = s
	}

	w.mu.Lock()
	defer w.mu.Unlock()
	if w.held == nil {
		w.held = map[string]map[string]bool{}
		w.running = map[string]*run{}
	}
	now := make(map[string]bool, len(want))
	for id := range want {
		if old[id] {
			now[id] = true
			continue
		}
		r := w.running[id]
		if r == nil {
			s, ok := made[id]
			if !ok {
				continue
			}
			sctx, cancel := context.WithCancel(ctx)
			r = &run{holders: map[string]bool{}, cancel: cancel}
			w.running[id] = r
			go start(sctx, s, r)
		}
		r.holders[holder] = true
		now[id] = true
	}
	for id := range old {
		if now[id] {
			continue
		}
		if r := w.running[id]; r != nil {
			if delete(r.holders, holder); len(r.holders) == 0 {
				r.cancel()
				delete(w.running, id)
				stopped = append(stopped, id)
			}
		}
	}
	if len(now) == 0 {
		delete(w.held, holder)
	} else {
		w.held[holder] = now
	}
	return stopped
}

// watch lists and watches s in every cluster until ctx ends.
func (c *Controller) watch(ctx context.Context, s Source, run *run) {
	var example runtime.Object // any type: custom and built-in alike
	r := cache.NewReflectorWithOptions(wildcard.ListWatch(s.Storage), example, &sink{c: c, source: s, run: run},
		cache.ReflectorOptions{Name: "garbagecollector " + s.ID})
	r.RunWithContext(ctx)
}

// sink is the cache.Store of a source's reflector: it keeps nothing and
// hands every change to the controller.
type sink struct {
	c      *Controller
	source Source
	run    *run
}

func (s *sink) Add(obj any) error    { s.c.observe(s.source, obj, false); return nil }
func (s *sink) Update(obj any) error { s.c.observe(s.source, obj, false); return nil }
func (s *sink) Delete(obj any) error { s.c.observe(s.source, obj, true); return nil }
func (s *sink) Replace(list []any, _ string) error {
	s.c.replace(s.source, s.c.watches.serves(s.run), list)
	s.c.watches.markListed(s.run)
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
	gk := kindOf(s, obj)
	if gk.Empty() {
		klog.V(4).InfoS("Object without kind", "source", s.ID, "name", m.GetName())
		return object{}, nil, false
	}
	return object{Cluster: m.GetAnnotations()[clusters.Annotation], GroupKind: gk.String(), Namespace: m.GetNamespace(),
		Name: m.GetName(), UID: m.GetUID()}, m, true
}

// kindOf is the kind of a stored object of s.
func kindOf(s Source, obj any) schema.GroupKind {
	if s.KindPerObject {
		if ro, ok := obj.(runtime.Object); ok {
			if k := ro.GetObjectKind().GroupVersionKind().GroupKind(); !k.Empty() {
				return k
			}
		}
	}
	return s.GroupKind
}
