package mounts

import (
	"context"
	"sync"

	kcpcache "github.com/kcp-dev/apimachinery/v2/pkg/cache"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/meshplane/meshplane/core/internal/clusters"
	"github.com/meshplane/meshplane/core/internal/registry/wildcard"
)

// Type is a resource mount objects are stored as.
type Type struct {
	// ID is the resource's identity across clusters (its storage
	// prefix): one watch per ID serves every cluster.
	ID string
	// Storage returns the resource's registry, to watch it.
	Storage func() (wildcard.Storage, error)
}

// Resolver finds the resource of a kind in a cluster; an error means the
// cluster serves no such kind.
type Resolver func(cluster string, gvk schema.GroupVersionKind) (Type, error)

// Objects watches the mount objects: one wildcard informer per resource
// that a mounted workspace refers to, started when the first reference
// appears and stopped when the last goes. No polling: every change of a
// mount object is an event.
type Objects struct {
	resolve Resolver
	changed func(ObjectKey)

	mu      sync.Mutex
	running map[string]*objectWatch
}

type objectWatch struct {
	informer cache.SharedIndexInformer
	storage  wildcard.Storage
	cancel   context.CancelFunc
}

// NewObjects returns the watches; changed is called with the key of every
// mount object that is added, updated or deleted.
func NewObjects(resolve Resolver, changed func(ObjectKey)) *Objects {
	return &Objects{resolve: resolve, changed: changed, running: map[string]*objectWatch{}}
}

// Sync runs a watch for each resource the mounted workspaces refer to and
// stops the rest. References to kinds not served (yet) start nothing;
// call Sync again when CRDs or bindings change.
func (o *Objects) Sync(ctx context.Context, mounted []Mounted) {
	want := map[string]Type{}
	for _, m := range mounted {
		if t, err := o.resolve(m.Parent, m.Ref.GroupVersionKind()); err == nil {
			want[t.ID] = t
		}
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	for id, t := range want {
		if o.running[id] != nil {
			continue
		}
		st, err := t.Storage()
		if err != nil {
			klog.V(2).InfoS("Not watching mount objects yet", "resource", id, "err", err)
			continue
		}
		wctx, cancel := context.WithCancel(ctx)
		inf := wildcard.NewInformer(st, &unstructured.Unstructured{})
		wildcard.Mirror(inf, func(obj any, _ bool) {
			if u, ok := obj.(*unstructured.Unstructured); ok {
				gvk := u.GroupVersionKind()
				o.changed(ObjectKey{Cluster: u.GetAnnotations()[clusters.Annotation], Group: gvk.Group, Kind: gvk.Kind,
					Namespace: u.GetNamespace(), Name: u.GetName()})
			}
		})
		o.running[id] = &objectWatch{informer: inf, storage: st, cancel: cancel}
		klog.V(2).InfoS("Watching mount objects", "resource", id)
		go inf.RunWithContext(wctx)
	}
	for id, w := range o.running {
		if _, ok := want[id]; !ok {
			w.cancel()
			delete(o.running, id)
			klog.V(2).InfoS("Stopped watching mount objects", "resource", id)
		}
	}
}

// Stop ends every watch.
func (o *Objects) Stop() {
	o.mu.Lock()
	defer o.mu.Unlock()
	for id, w := range o.running {
		w.cancel()
		delete(o.running, id)
	}
}

// State returns what the mount object of m says. ok is false while the
// watch of its resource has not listed yet (the answer would be a guess).
func (o *Objects) State(m Mounted) (s State, ok bool) {
	t, err := o.resolve(m.Parent, m.Ref.GroupVersionKind())
	if err != nil {
		return NotFound(m.Ref, err.Error()), true
	}
	o.mu.Lock()
	w := o.running[t.ID]
	o.mu.Unlock()
	if w == nil || !w.informer.HasSynced() {
		return State{}, false
	}
	obj, exists, err := w.informer.GetStore().GetByKey(kcpcache.ToClusterAwareKey(m.Parent, m.Ref.Namespace, m.Ref.Name))
	if err != nil || !exists {
		// The watch may not have delivered an object created a moment
		// ago: absence is confirmed in storage before it is reported.
		if obj, exists = o.live(w, m); !exists {
			return NotFound(m.Ref, ""), true
		}
	}
	u, isU := obj.(*unstructured.Unstructured)
	if !isU || u.GetKind() != m.Ref.Kind {
		return NotFound(m.Ref, ""), true
	}
	return Read(u), true
}

// live reads m's mount object from storage, for an object the informer
// does not hold (yet).
func (o *Objects) live(w *objectWatch, m Mounted) (runtime.Object, bool) {
	g, ok := w.storage.(rest.Getter)
	if !ok {
		return nil, false
	}
	ctx := clusters.WithCluster(context.Background(), m.Parent)
	if m.Ref.Namespace != "" {
		ctx = genericapirequest.WithNamespace(ctx, m.Ref.Namespace)
	}
	obj, err := g.Get(ctx, m.Ref.Name, &metav1.GetOptions{})
	if err != nil {
		return nil, false
	}
	klog.V(2).InfoS("Mount object found in storage before its watch delivered it", "cluster", m.Parent, "name", m.Ref.Name)
	return obj, true
}
