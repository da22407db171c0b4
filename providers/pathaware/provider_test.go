package pathaware

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	apisv1alpha1 "github.com/kcp-dev/sdk/apis/apis/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/multicluster-runtime/pkg/multicluster"
)

func binding(cluster string, annotations map[string]string) *apisv1alpha1.APIBinding {
	a := map[string]string{"kcp.io/cluster": cluster}
	for k, v := range annotations {
		a[k] = v
	}
	return &apisv1alpha1.APIBinding{ObjectMeta: metav1.ObjectMeta{Name: "b", Annotations: a}}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A lookup that hangs for one cluster must not hold up the others, and
// OnAdd (called from the provider's informer) must return at once.
func TestResolverSlowClusterDoesNotStallOthers(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	resolve := func(ctx context.Context, cluster string) (string, error) {
		if cluster == "slow" {
			select {
			case <-release:
			case <-ctx.Done():
				return "", ctx.Err()
			}
		}
		return "root:" + cluster, nil
	}
	paths := NewPaths()
	r := newResolver(paths, resolve, 2, time.Minute, logr.Discard())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go r.run(ctx)

	start := time.Now()
	r.OnAdd(binding("slow", nil))
	for _, c := range []string{"a", "b", "c", "d"} {
		r.OnAdd(binding(c, nil))
	}
	if d := time.Since(start); d > 100*time.Millisecond {
		t.Fatalf("OnAdd blocked for %s", d)
	}
	waitFor(t, "every fast cluster's path", func() bool {
		for _, c := range []string{"a", "b", "c", "d"} {
			if p, ok := paths.Path(c); !ok || p != "root:"+c {
				return false
			}
		}
		return true
	})
	if _, ok := paths.Path("slow"); ok {
		t.Fatal("the slow cluster's path is known before its lookup returned")
	}
}

func TestResolverRetriesAndUsesAnnotation(t *testing.T) {
	var mu sync.Mutex
	calls := 0
	resolve := func(ctx context.Context, cluster string) (string, error) {
		mu.Lock()
		defer mu.Unlock()
		calls++
		if calls < 3 {
			return "", errors.New("not yet")
		}
		return "root:orgs", nil
	}
	paths := NewPaths()
	r := newResolver(paths, resolve, 1, time.Second, logr.Discard())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go r.run(ctx)

	r.OnAdd(binding("annotated", map[string]string{PathAnnotation: "root:x"}))
	if c, ok := paths.Cluster("root:x"); !ok || c != "annotated" {
		t.Fatalf("the kcp.io/path annotation was not used directly: %q %v", c, ok)
	}
	r.OnAdd(binding("orgs", nil))
	waitFor(t, "the path after two failed lookups", func() bool { c, ok := paths.Cluster("root:orgs"); return ok && c == "orgs" })

	r.OnDelete(binding("orgs", nil))
	if _, ok := paths.Cluster("root:orgs"); ok {
		t.Fatal("OnDelete kept the path")
	}
}

func TestPathsRename(t *testing.T) {
	p := NewPaths()
	p.Add("root:a", "c1")
	p.Add("root:b", "c1")
	if _, ok := p.Cluster("root:a"); ok {
		t.Fatal("the old path of a renamed cluster is still mapped")
	}
	if c, _ := p.Cluster("root:b"); c != "c1" {
		t.Fatalf("Cluster(root:b) = %q", c)
	}
	p.Remove("c1")
	if _, ok := p.Path("c1"); ok {
		t.Fatal("Remove kept the cluster")
	}
}

type blockingAware struct {
	mu      sync.Mutex
	engaged []multicluster.ClusterName
	block   chan struct{}
}

func (b *blockingAware) Engage(ctx context.Context, name multicluster.ClusterName, _ cluster.Cluster) error {
	if name == "stuck" {
		<-b.block
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.engaged = append(b.engaged, name)
	return nil
}

func TestAsyncAwareDoesNotBlock(t *testing.T) {
	inner := &blockingAware{block: make(chan struct{})}
	defer close(inner.block)
	a := &AsyncAware{Inner: inner, Log: logr.Discard(), SlowAfter: 10 * time.Millisecond}
	start := time.Now()
	for _, n := range []multicluster.ClusterName{"stuck", "one", "two"} {
		if err := a.Engage(context.Background(), n, nil); err != nil {
			t.Fatal(err)
		}
	}
	if d := time.Since(start); d > 100*time.Millisecond {
		t.Fatalf("Engage blocked for %s", d)
	}
	waitFor(t, "the two healthy clusters to be engaged", func() bool {
		inner.mu.Lock()
		defer inner.mu.Unlock()
		return len(inner.engaged) == 2
	})
}

func TestNotPermitted(t *testing.T) {
	np := &NotPermittedError{Err: errors.New("GET x: 403")}
	for _, c := range []struct {
		err  error
		want bool
	}{
		{np, true},
		{errors.Join(np, &NotPermittedError{Err: errors.New("GET y: 401")}), true},
		{errors.Join(np, errors.New("GET y: 404")), false},
		{errors.New("connection refused"), false},
		{errors.Join(), false},
	} {
		if got := notPermitted(c.err); got != c.want {
			t.Errorf("notPermitted(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}

// A lookup the credential may not make is not retried at the usual pace
// (it would be tried again after 200 ms, 400 ms, 800 ms ...).
func TestResolverWaitsLongAfterNotPermitted(t *testing.T) {
	var mu sync.Mutex
	calls := 0
	resolve := func(ctx context.Context, cluster string) (string, error) {
		mu.Lock()
		defer mu.Unlock()
		calls++
		return "", &NotPermittedError{Err: errors.New("GET logicalclusters/cluster: 403")}
	}
	r := newResolver(NewPaths(), resolve, 1, time.Second, logr.Discard())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go r.run(ctx)
	r.OnAdd(binding("c1", nil))
	waitFor(t, "the first lookup", func() bool { mu.Lock(); defer mu.Unlock(); return calls == 1 })
	time.Sleep(1500 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	if calls != 1 {
		t.Errorf("a refused lookup was repeated %d times within 1.5 s", calls-1)
	}
}
