package gc

import (
	"context"
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

// BenchmarkCascade10000 deletes an owner of 10,000 configmaps, in the
// background and in the foreground, and measures the time until the
// owner and all dependents are gone (creating them is not timed). Run it
// alone: go test -run '^$' -bench Cascade -benchtime 1x.
func BenchmarkCascade10000(b *testing.B) {
	for _, policy := range []metav1.DeletionPropagation{metav1.DeletePropagationBackground, metav1.DeletePropagationForeground} {
		b.Run(string(policy), func(b *testing.B) { benchmarkCascade(b, policy) })
	}
}

// benchLabels mark the owner and dependents of the benchmark.
var benchLabels = map[string]string{"bench": "gc"}

// benchmarkCascade deletes an owner of 10,000 blocking dependents with
// policy and waits until the owner and its dependents are gone.
func benchmarkCascade(b *testing.B, policy metav1.DeletionPropagation) {
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
		// One context for the whole iteration: creating 10,000 objects
		// outlasts a single call's time limit.
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
		defer cancel()
		owner, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "owner", Labels: benchLabels}}, metav1.CreateOptions{})
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
						Name: fmt.Sprintf("dep-%05d", n), Labels: benchLabels, OwnerReferences: []metav1.OwnerReference{cmRef(owner, true)}}},
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
		if err := cs.CoreV1().ConfigMaps(ns).Delete(ctx, "owner", metav1.DeleteOptions{PropagationPolicy: &policy}); err != nil {
			b.Fatal(err)
		}
		left := -1
		for left != 0 {
			if time.Since(start) > 10*time.Minute {
				b.Fatal("owner or dependents left after 10 minutes")
			}
			time.Sleep(250 * time.Millisecond)
			// A one-item page: cheap to ask often, empty once all are gone
			// (the label leaves out the namespace's kube-root-ca.crt).
			list, err := cs.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{Limit: 1, LabelSelector: "bench=gc"})
			if err != nil {
				b.Fatal(err)
			}
			left = len(list.Items)
		}
		elapsed := time.Since(start)
		b.ReportMetric(elapsed.Seconds(), "s/cascade")
		b.ReportMetric(dependents/elapsed.Seconds(), "dependents/s")
		b.Logf("deleted an owner of %d dependents (%s): owner and dependents gone after %s", dependents, policy, elapsed.Round(10*time.Millisecond))
	}
}
