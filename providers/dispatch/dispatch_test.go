package dispatch

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	kcpcache "github.com/kcp-dev/apimachinery/v2/pkg/cache"
	kcpinformers "github.com/kcp-dev/apimachinery/v2/third_party/informers"
	mcpcache "github.com/kcp-dev/multicluster-provider/pkg/cache"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
	toolscache "k8s.io/client-go/tools/cache"
	fcache "k8s.io/client-go/tools/cache/testing"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

func cm(cluster, name, data string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{"kcp.io/cluster": cluster}},
		Data: map[string]string{"v": data}}
}

// recorder is a handler that records what it was told.
type recorder struct {
	mu     sync.Mutex
	events []string
}

func (r *recorder) add(s string) { r.mu.Lock(); defer r.mu.Unlock(); r.events = append(r.events, s) }
func (r *recorder) OnAdd(obj any, initial bool) {
	s := "add " + obj.(*corev1.ConfigMap).Name
	if initial {
		s += " (initial)"
	}
	r.add(s)
}
func (r *recorder) OnUpdate(_, obj any) { r.add("update " + obj.(*corev1.ConfigMap).Name) }
func (r *recorder) OnDelete(obj any) {
	if t, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	r.add("delete " + obj.(*corev1.ConfigMap).Name)
}
func (r *recorder) has(s string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Contains(r.events, s)
}
func (r *recorder) got() []string { r.mu.Lock(); defer r.mu.Unlock(); return slices.Clone(r.events) }

func eventually(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !ok(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// TestDispatcherRoutesByCluster: each workspace's handler gets the objects
// of its workspace only, those already in the store when it is added
// (initial) and every later change, and nothing once removed.
func TestDispatcherRoutesByCluster(t *testing.T) {
	src := fcache.NewFakeControllerSource()
	src.Add(cm("c1", "a", "1"))
	src.Add(cm("c2", "b", "1"))
	inf := toolscache.NewSharedIndexInformer(src, &corev1.ConfigMap{}, 0,
		toolscache.Indexers{kcpcache.ClusterIndexName: kcpcache.ClusterIndexFunc})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go inf.RunWithContext(ctx)
	if !toolscache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		t.Fatal("informer did not sync")
	}
	d := New(scheme.Scheme).dispatcher(inf)

	h1 := &recorder{}
	reg1, err := d.add("c1", h1, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := h1.got(); !slices.Equal(got, []string{"add a (initial)"}) {
		t.Fatalf("c1's handler got %v on registration, want only a's initial add", got)
	}

	src.Add(cm("c1", "c", "1"))
	src.Add(cm("c2", "d", "1"))
	src.Modify(cm("c1", "a", "2"))
	eventually(t, "c1's new and changed objects", func() bool { return h1.has("add c") && h1.has("update a") })

	h2 := &recorder{}
	if _, err := d.add("c2", h2, nil); err != nil {
		t.Fatal(err)
	}
	if !h2.has("add b (initial)") || !h2.has("add d (initial)") {
		t.Fatalf("c2's late handler got %v, want b and d", h2.got())
	}
	src.Delete(cm("c2", "b", "1"))
	eventually(t, "b's deletion in c2", func() bool { return h2.has("delete b") })

	d.remove(reg1.(*registration))
	src.Modify(cm("c1", "c", "2"))
	src.Add(cm("c2", "e", "1"))
	eventually(t, "e in c2", func() bool { return h2.has("add e") })
	for _, e := range h1.got() {
		if e == "update c" || e == "add e" || e == "add b (initial)" || e == "add d (initial)" || e == "delete b" {
			t.Errorf("c1's handler got %q (of c2, or after its removal)", e)
		}
	}
	for _, e := range h2.got() {
		if e == "add a (initial)" || e == "add c" || e == "update a" || e == "update c" {
			t.Errorf("c2's handler got %q of c1", e)
		}
	}
}

// fakeWildcard is a wildcard cache with one shared informer (only the
// methods Watch, For and Get use).
type fakeWildcard struct {
	mcpcache.WildcardCache
	inf toolscache.SharedIndexInformer
}

func (f *fakeWildcard) GetInformer(context.Context, client.Object, ...cache.InformerGetOption) (cache.Informer, error) {
	return f.inf, nil
}

func (f *fakeWildcard) GetSharedInformer(runtime.Object) (toolscache.SharedIndexInformer, schema.GroupVersionKind, meta.RESTScopeName, error) {
	return f.inf, schema.GroupVersionKind{}, meta.RESTScopeNameRoot, nil
}

// TestWatchEveryWorkspace: a Watch handler sees the objects of every
// workspace, once, from the first workspace of a cache on (whether the
// Watch came before or after it), and Get finds an object by cluster and
// name in the caches' stores.
func TestWatchEveryWorkspace(t *testing.T) {
	src := fcache.NewFakeControllerSource()
	src.Add(cm("c1", "a", "1"))
	src.Add(cm("c2", "b", "1"))
	// kcp's informer, keyed by cluster as the wildcard caches' are.
	inf := kcpinformers.NewSharedIndexInformer(src, &corev1.ConfigMap{}, 0,
		toolscache.Indexers{kcpcache.ClusterIndexName: kcpcache.ClusterIndexFunc})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go inf.RunWithContext(ctx)
	if !toolscache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		t.Fatal("informer did not sync")
	}
	wc := &fakeWildcard{inf: inf}
	d := New(scheme.Scheme)

	early := &recorder{}
	if err := d.Watch(&corev1.ConfigMap{}, early, nil); err != nil {
		t.Fatal(err)
	}
	if got := early.got(); len(got) != 0 {
		t.Fatalf("a Watch before any cache got %v", got)
	}
	d.For(wc, "c1")
	d.For(wc, "c2") // the same cache: not attached twice
	eventually(t, "both workspaces' objects", func() bool { return early.has("add a (initial)") && early.has("add b (initial)") })

	late := &recorder{}
	if err := d.Watch(&corev1.ConfigMap{}, late, nil); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the late Watch's objects", func() bool { return late.has("add a (initial)") && late.has("add b (initial)") })

	src.Add(cm("c3", "c", "1"))
	eventually(t, "an object of a workspace never engaged", func() bool { return early.has("add c") && late.has("add c") })
	n := 0
	for _, e := range early.got() {
		if e == "add a (initial)" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("the early handler saw a %d times, want once: %v", n, early.got())
	}
	if _, ok := d.Get(&corev1.ConfigMap{}, "c3", "c"); !ok {
		t.Error("Get did not find c in c3")
	}
	if _, ok := d.Get(&corev1.ConfigMap{}, "c1", "c"); ok {
		t.Error("Get found c in c1, where there is none")
	}
}

// askedWildcard records the kinds its informers were asked for.
type askedWildcard struct {
	fakeWildcard
	mu    sync.Mutex
	kinds []string
}

func (a *askedWildcard) GetInformer(ctx context.Context, obj client.Object, opts ...cache.InformerGetOption) (cache.Informer, error) {
	a.mu.Lock()
	a.kinds = append(a.kinds, fmt.Sprintf("%T", obj))
	a.mu.Unlock()
	return a.fakeWildcard.GetInformer(ctx, obj, opts...)
}

func (a *askedWildcard) asked() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := slices.Clone(a.kinds)
	slices.Sort(out)
	return out
}

// TestNewCacheStartsKnownKinds: a cache seen after workspaces asked for
// informers (the endpoint of a new shard) gets the informers of every
// kind asked so far at once, before any of its workspaces asks.
func TestNewCacheStartsKnownKinds(t *testing.T) {
	inf := kcpinformers.NewSharedIndexInformer(fcache.NewFakeControllerSource(), &corev1.ConfigMap{}, 0,
		toolscache.Indexers{kcpcache.ClusterIndexName: kcpcache.ClusterIndexFunc})
	d := New(scheme.Scheme)
	first := &askedWildcard{fakeWildcard: fakeWildcard{inf: inf}}
	v := d.For(first, "c1")
	if got := first.asked(); len(got) != 0 {
		t.Fatalf("the first cache was asked for %v before any workspace asked", got)
	}
	for _, obj := range []client.Object{&corev1.ConfigMap{}, &corev1.Secret{}, &corev1.ConfigMap{}} {
		if _, err := v.GetInformer(context.Background(), obj); err != nil {
			t.Fatal(err)
		}
	}
	second := &askedWildcard{fakeWildcard: fakeWildcard{inf: inf}}
	d.For(second, "c2")
	if got, want := second.asked(), []string{"*v1.ConfigMap", "*v1.Secret"}; !slices.Equal(got, want) {
		t.Errorf("a new cache was asked for %v, want %v", got, want)
	}
	d.For(second, "c3")
	if got := second.asked(); len(got) != 2 {
		t.Errorf("a cache seen again was asked again: %v", got)
	}
}
