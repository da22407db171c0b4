package bench

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

var widgetsCRD = framework.SchemalessCRD("example.com", "widgets", "Widget")

// TestSharingBench measures API sharing across shards (a root shard and
// shard b behind the proxy, an export on root): APIBinding created ->
// Bound on the export's shard and on the other one, and, for the first
// binding on b, Bound -> b's URL in the export's endpoint slice. Each
// binding is polled every 2 ms on its shard.
//
//	PROXY_BENCH_RUN=1 go test -run TestSharingBench -v ./proxy/test/bench/
//
// (PROXY_BENCH_BINDINGS sizes it; PROXY_BENCH_SHARING_OUT names a file for
// the Markdown table).
func TestSharingBench(t *testing.T) {
	if os.Getenv("PROXY_BENCH_RUN") == "" {
		t.Skip("set PROXY_BENCH_RUN=1 (make bench does)")
	}
	n := envInt("PROXY_BENCH_BINDINGS", 10)
	sh := framework.StartShards(t)
	ps := sh.Via
	org := framework.CreatePinnedWorkspace(t, ps, "root", "sharebench", "root")
	provider := framework.CreatePinnedWorkspace(t, ps, org.Path, "provider", "root")
	ps.ExportCRD(t, provider, widgetsCRD, "example.com")
	bURL := strings.TrimSpace(sh.Root.KubectlFor("root").Run(t, "get", "shard", "b", "-o", "jsonpath={.spec.virtualWorkspaceURL}")) +
		"/services/apiexport/" + provider.Cluster + "/example.com"

	bindLatency := func(shard string, s *framework.Server, i int, onBound func()) time.Duration {
		c := framework.CreatePinnedWorkspace(t, ps, org.Path, fmt.Sprintf("c-%s-%d", shard, i), shard)
		dyn := s.Dynamic(t, c.Cluster)
		start := time.Now()
		if _, err := dyn.Resource(framework.APIBindingGVR).Create(framework.CallContext(t),
			framework.APIBinding("widgets", provider.Path, "example.com", nil), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		for {
			got, err := dyn.Resource(framework.APIBindingGVR).Get(framework.CallContext(t), "widgets", metav1.GetOptions{})
			if err == nil {
				if phase, _, _ := unstructured.NestedString(got.Object, "status", "phase"); phase == "Bound" {
					d := time.Since(start)
					if onBound != nil {
						onBound()
					}
					return d
				}
			}
			if time.Since(start) > time.Minute {
				t.Fatalf("APIBinding in %s not Bound within a minute", c.Path)
			}
			time.Sleep(2 * time.Millisecond)
		}
	}
	var sameShard, otherShard []time.Duration
	var sliceLag time.Duration
	slices := sh.Root.Dynamic(t, provider.Cluster).Resource(framework.EndpointSliceGVR)
	for i := 0; i < n; i++ {
		sameShard = append(sameShard, bindLatency("root", sh.Root, i, nil))
		var first func()
		if i == 0 {
			first = func() {
				start := time.Now()
				for {
					got, err := slices.Get(framework.CallContext(t), "example.com", metav1.GetOptions{})
					if err == nil && strings.Contains(framework.Compact(got.Object["status"]), bURL) {
						sliceLag = time.Since(start)
						return
					}
					if time.Since(start) > time.Minute {
						t.Fatal("b's URL not in the slice within a minute")
					}
					time.Sleep(2 * time.Millisecond)
				}
			}
		}
		otherShard = append(otherShard, bindLatency("b", sh.B, i, first))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "| figure (%d bindings each) | p50 | max |\n| --- | --- | --- |\n", n)
	row := func(what string, d []time.Duration) {
		fmt.Fprintf(&b, "| %s | %.1f ms | %.1f ms |\n", what, ms(percentile(d, 0.5)), ms(percentile(d, 1)))
	}
	row("APIBinding created -> Bound, consumer on the export's shard", sameShard)
	row("APIBinding created -> Bound, consumer on the other shard", otherShard)
	fmt.Fprintf(&b, "| first binding on b Bound -> b's URL in the endpoint slice (on root) | %.1f ms | |\n", ms(sliceLag))
	t.Log("\n" + b.String())
	if out := os.Getenv("PROXY_BENCH_SHARING_OUT"); out != "" {
		if err := os.WriteFile(out, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
