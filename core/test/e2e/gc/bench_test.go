package gc

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// BenchmarkCascade10000 deletes an owner of 10,000 configmaps and
// measures the time until all dependents are gone (creating them is not
// timed). Run it alone: go test -run '^$' -bench Cascade -benchtime 1x.
func BenchmarkCascade10000(b *testing.B) {
	const dependents = 10000
	s := framework.SharedServer(b)
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		name, k := s.NewCluster(b, "bench-gc")
		cfg := s.RESTConfig(b, name)
		cfg.QPS, cfg.Burst = -1, 0
		cs, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			b.Fatal(err)
		}
		k.Run(b, "create", "namespace", ns)
		ctx := framework.CallContext(b)
		owner, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "owner"}}, metav1.CreateOptions{})
		if err != nil {
			b.Fatal(err)
		}
		var next atomic.Int64
		var wg sync.WaitGroup
		var failed atomic.Value
		for w := 0; w < 16; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					n := next.Add(1)
					if n > dependents {
						return
					}
					_, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
						Name: fmt.Sprintf("dep-%05d", n), OwnerReferences: []metav1.OwnerReference{cmRef(owner, false)}}},
						metav1.CreateOptions{})
					if err != nil {
						failed.Store(err)
						return
					}
				}
			}()
		}
		wg.Wait()
		if err, ok := failed.Load().(error); ok {
			b.Fatalf("creating dependents: %v", err)
		}
		b.StartTimer()
		start := time.Now()
		if err := cs.CoreV1().ConfigMaps(ns).Delete(ctx, "owner", metav1.DeleteOptions{}); err != nil {
			b.Fatal(err)
		}
		left := -1
		for left != 0 {
			if time.Since(start) > 10*time.Minute {
				b.Fatalf("%d dependents left after 10 minutes", left)
			}
			time.Sleep(250 * time.Millisecond)
			list, err := cs.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				b.Fatal(err)
			}
			left = 0
			for _, cm := range list.Items {
				if len(cm.OwnerReferences) > 0 {
					left++
				}
			}
		}
		elapsed := time.Since(start)
		b.ReportMetric(elapsed.Seconds(), "s/cascade")
		b.ReportMetric(dependents/elapsed.Seconds(), "dependents/s")
		b.Logf("deleted an owner of %d dependents: all gone after %s", dependents, elapsed.Round(10*time.Millisecond))
	}
}
