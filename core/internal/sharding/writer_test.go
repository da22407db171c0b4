package sharding

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	corev1alpha1 "github.com/kcp-dev/sdk/apis/core/v1alpha1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/meshplane/meshplane/core/internal/cacheserver"
)

// faults stands in front of a real cache server: while down it answers
// code to every request, and it refuses the next refusePuts writes with
// 500.
type faults struct {
	down       atomic.Bool
	code       int
	refusePuts atomic.Int32
	refused    atomic.Int32
}

func (f *faults) front(t *testing.T, base string) *httptest.Server {
	t.Helper()
	u, _ := url.Parse(base)
	proxy := httputil.NewSingleHostReverseProxy(u)
	proxy.FlushInterval = -1
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if f.down.Load() {
			f.refused.Add(1)
			w.Header().Set("Retry-After", "1")
			http.Error(w, "down", f.code)
			return
		}
		if r.Method == http.MethodPut && f.refusePuts.Add(-1) >= 0 {
			f.refused.Add(1)
			http.Error(w, "refused once", http.StatusInternalServerError)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func lcURL(base, shard, cluster string) string {
	return fmt.Sprintf("%s%s/shards/%s/clusters/%s/apis/core.kcp.io/v1alpha1/logicalclusters/cluster", base, cacheserver.PathPrefix, shard, cluster)
}

func lcObj(path string) map[string]any {
	return map[string]any{"apiVersion": "core.kcp.io/v1alpha1", "kind": "LogicalCluster",
		"metadata": map[string]any{"name": "cluster", "annotations": map[string]any{"kcp.io/path": path}}}
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestCacheWriterHeals: shard b's writer copies its objects to a real
// cache server (its informers read a real API: shard src's objects on the
// same cache server) through a front that fails on demand. A write
// refused once is retried; copies swept behind the writer's back (the
// sweep of a shard that came back) come back at the next resync, not only
// when they change; a cache server unreachable for a while, and which lost
// b's copies meanwhile, gets every copy back, additions and deletions
// included.
func TestCacheWriterHeals(t *testing.T) {
	base, h := startCacheServer(t)
	f := &faults{code: http.StatusServiceUnavailable}
	front := f.front(t, base)

	src := (&Shards{Self: "src"}).Others()
	local := map[schema.GroupVersionResource]cache.SharedIndexInformer{}
	for _, kind := range CacheKinds {
		inf, err := src.informer(&rest.Config{BearerToken: shardToken}, base+cacheserver.PathPrefix+"/shards/src/clusters/*", kind, false)
		if err != nil {
			t.Fatal(err)
		}
		local[kind.GVR] = inf
	}
	w, err := NewWriter("b", &rest.Config{Host: front.URL + cacheserver.PathPrefix, BearerToken: shardToken}, local)
	if err != nil {
		t.Fatal(err)
	}
	w.ResyncPeriod = 500 * time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, inf := range local {
		go inf.RunWithContext(ctx)
	}
	go w.Run(ctx)

	put := func(cluster string) {
		t.Helper()
		if code := send(t, http.MethodPut, lcURL(base, "src", cluster), shardToken, lcObj("root:"+cluster)); code != http.StatusOK {
			t.Fatalf("writing src's logical cluster %s: %d", cluster, code)
		}
	}
	copied := func(cluster string) bool {
		return send(t, http.MethodGet, lcURL(base, "b", cluster), shardToken, nil) == http.StatusOK
	}

	put("c1")
	eventually(t, "b's copy of c1", func() bool { return copied("c1") })

	f.refusePuts.Store(1)
	put("c2")
	eventually(t, "b's copy of c2 after a refused write", func() bool { return copied("c2") })
	if f.refused.Load() == 0 {
		t.Fatal("no write was refused")
	}

	// Shard b leaves the Shards for two sweeps: its copies go, its writer
	// still believes them written.
	sw := &cacheserver.Sweeper{Handler: h, Shards: func(context.Context) (map[string]bool, error) { return map[string]bool{"src": true}, nil }}
	if _, err := sw.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	if n, err := sw.Sweep(ctx); err != nil || n < 2 {
		t.Fatalf("the second sweep deleted %d (%v), want b's copies", n, err)
	}
	eventually(t, "b's swept copies to come back", func() bool { return copied("c1") && copied("c2") })

	// The cache server is unreachable for a while and loses b's copies; c3
	// comes and c2 goes meanwhile.
	f.refused.Store(0)
	f.down.Store(true)
	put("c3")
	if code := send(t, http.MethodDelete, lcURL(base, "src", "c2"), shardToken, nil); code != http.StatusOK {
		t.Fatalf("deleting src's c2: %d", code)
	}
	for _, c := range []string{"c1", "c2"} {
		if code := send(t, http.MethodDelete, lcURL(base, "b", c), shardToken, nil); code != http.StatusOK {
			t.Fatalf("deleting b's copy of %s: %d", c, code)
		}
	}
	eventually(t, "the writer to meet the unreachable cache server", func() bool { return f.refused.Load() >= 3 })
	f.down.Store(false)
	eventually(t, "b's copies of c1 and c3, not c2, once the cache server is back", func() bool {
		return copied("c1") && copied("c3") && !copied("c2")
	})
}

// TestCacheReaderRelists: a reader whose watch on the cache server breaks
// while the revisions it knows are compacted away (the cache server
// answers its watch from there with 410 Gone) lists again and misses
// nothing: an object added and one deleted meanwhile are both seen, and
// the handlers are told of the delete (kcp's informer could not drop it:
// see pruner).
func TestCacheReaderRelists(t *testing.T) {
	base, h := startCacheServer(t)
	f := &faults{code: http.StatusTooManyRequests}
	front := f.front(t, base)
	for _, c := range []string{"kept", "deleted"} {
		if code := send(t, http.MethodPut, lcURL(base, "root", c), shardToken, lcObj("root:"+c)); code != http.StatusOK {
			t.Fatalf("writing %s: %d", c, code)
		}
	}
	s := &Shards{Self: "b", CacheServer: &rest.Config{Host: front.URL + cacheserver.PathPrefix, BearerToken: shardToken},
		List: func(context.Context) ([]corev1alpha1.Shard, error) { return nil, nil }}
	o := s.Others()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var deletes atomic.Int32
	_, _ = o.Source(LogicalClusters).AddEventHandler(cache.ResourceEventHandlerFuncs{DeleteFunc: func(obj any) {
		if lc, ok := obj.(*corev1alpha1.LogicalCluster); ok && lc.Annotations[ShardAnnotation] == "root" && lc.Annotations["kcp.io/cluster"] == "deleted" {
			deletes.Add(1)
		}
	}})
	go o.Run(ctx)
	eventually(t, "the reader to sync", o.HasSynced)
	has := func(c string) bool { _, ok := o.ShardOf(c); return ok }
	if !has("kept") || !has("deleted") {
		t.Fatal("the reader misses root's logical clusters")
	}

	// The watches break; the reader retries (429) while the cache changes
	// and its history is compacted.
	f.down.Store(true)
	front.CloseClientConnections()
	if code := send(t, http.MethodPut, lcURL(base, "root", "added"), shardToken, lcObj("root:added")); code != http.StatusOK {
		t.Fatalf("writing added: %d", code)
	}
	if code := send(t, http.MethodDelete, lcURL(base, "root", "deleted"), shardToken, nil); code != http.StatusOK {
		t.Fatalf("deleting: %d", code)
	}
	resp, err := h.Client.Get(ctx, "/meshplane-cache/")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Client.Compact(ctx, resp.Header.Revision); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the reader to retry its watch", func() bool { return f.refused.Load() > 0 })
	f.down.Store(false)
	eventually(t, "the reader to see the added cluster and drop the deleted one", func() bool {
		return has("added") && !has("deleted") && has("kept")
	})
	if n := deletes.Load(); n != 1 {
		t.Errorf("the handlers were told of %d deletes of the deleted cluster, want 1", n)
	}
}
