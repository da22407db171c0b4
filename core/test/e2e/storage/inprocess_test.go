package storage

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// TestInProcessEtcdClientUnderWatchLoad runs the server on the embedded
// etcd's in-process client (--embedded-etcd-in-process-client) while
// writers create configmaps in three logical clusters, a wildcard watch and
// per-cluster watches are open and readers list without a resourceVersion.
// A LIST without resourceVersion is served from the watch cache only once
// the cache has caught up with etcd's current revision (progress
// notifications; secrets are written meanwhile so that etcd's revision also
// moves without configmap events), so every create acknowledged before a LIST started must
// be in it; and every watch must see every create of its scope.
func TestInProcessEtcdClientUnderWatchLoad(t *testing.T) {
	s := framework.StartServer(t, framework.WithExtraArgs("--embedded-etcd-in-process-client"))
	const (
		ns         = "load"
		perCluster = 150
		writers    = 3
	)
	clusters := []string{framework.UniqueName("e2e-inproc-a"), framework.UniqueName("e2e-inproc-b"), framework.UniqueName("e2e-inproc-c")}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	clients := map[string]*kubernetes.Clientset{}
	for _, c := range clusters {
		cs, err := kubernetes.NewForConfig(s.RESTConfig(t, c))
		if err != nil {
			t.Fatal(err)
		}
		clients[c] = cs
		if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatalf("creating namespace in %s: %v", c, err)
		}
	}
	wildcard, err := kubernetes.NewForConfig(s.RESTConfig(t, "*"))
	if err != nil {
		t.Fatal(err)
	}

	// Watches: one across all clusters, one per cluster.
	type seenSet struct {
		mu    sync.Mutex
		names map[string]bool
	}
	watchInto := func(w watch.Interface, set *seenSet) {
		for ev := range w.ResultChan() {
			cm, ok := ev.Object.(*corev1.ConfigMap)
			if !ok || ev.Type != watch.Added || cm.Namespace != ns || !strings.HasPrefix(cm.Name, "cm-") {
				continue // e.g. the kube-root-ca.crt of each namespace
			}
			set.mu.Lock()
			set.names[cm.Annotations[framework.ClusterAnnotation]+"/"+cm.Name] = true
			set.mu.Unlock()
		}
	}
	all := &seenSet{names: map[string]bool{}}
	w, err := wildcard.CoreV1().ConfigMaps("").Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("wildcard watch: %v", err)
	}
	defer w.Stop()
	go watchInto(w, all)
	perClusterSeen := map[string]*seenSet{}
	for _, c := range clusters {
		set := &seenSet{names: map[string]bool{}}
		perClusterSeen[c] = set
		cw, err := clients[c].CoreV1().ConfigMaps(ns).Watch(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatalf("watch in %s: %v", c, err)
		}
		defer cw.Stop()
		go watchInto(cw, set)
	}

	// Writers: record each create once the server acknowledged it.
	var (
		mu    sync.Mutex
		acked = map[string]map[string]bool{}
	)
	for _, c := range clusters {
		acked[c] = map[string]bool{}
	}
	errs := make(chan error, writers*len(clusters)+len(clusters)+1)
	var wg sync.WaitGroup
	for _, c := range clusters {
		for wr := 0; wr < writers; wr++ {
			wg.Add(1)
			go func(c string, wr int) {
				defer wg.Done()
				for i := wr; i < perCluster; i += writers {
					name := fmt.Sprintf("cm-%04d", i)
					if _, err := clients[c].CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{
						ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"i": name},
					}, metav1.CreateOptions{}); err != nil {
						errs <- fmt.Errorf("create %s in %s: %w", name, c, err)
						return
					}
					mu.Lock()
					acked[c][name] = true
					mu.Unlock()
				}
			}(c, wr)
		}
	}

	// Secrets written meanwhile move etcd's revision without configmap
	// events: the configmap cache then needs progress notifications to
	// serve a LIST without resourceVersion.
	writersDone, secretsDone := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(secretsDone)
		for i := 0; ; i++ {
			select {
			case <-writersDone:
				return
			default:
			}
			if _, err := clients[clusters[i%len(clusters)]].CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{
				ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("s-%05d", i)},
			}, metav1.CreateOptions{}); err != nil {
				errs <- fmt.Errorf("create secret: %w", err)
				return
			}
		}
	}()

	// Readers: a LIST must hold every create acknowledged before it began.
	done := make(chan struct{})
	var readers sync.WaitGroup
	lists := make([]int, len(clusters))
	for idx, c := range clusters {
		readers.Add(1)
		go func(idx int, c string) {
			defer readers.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				mu.Lock()
				before := make([]string, 0, len(acked[c]))
				for n := range acked[c] {
					before = append(before, n)
				}
				mu.Unlock()
				list, err := clients[c].CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
				if err != nil {
					errs <- fmt.Errorf("list in %s: %w", c, err)
					return
				}
				have := make(map[string]bool, len(list.Items))
				for _, item := range list.Items {
					have[item.Name] = true
				}
				for _, n := range before {
					if !have[n] {
						errs <- fmt.Errorf("list in %s at resourceVersion %s misses %s, whose create was acknowledged before the list began", c, list.ResourceVersion, n)
						return
					}
				}
				lists[idx]++
			}
		}(idx, c)
	}
	wg.Wait()
	close(writersDone)
	<-secretsDone
	close(done)
	readers.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if t.Failed() {
		return
	}
	t.Logf("consistent LISTs per cluster during the writes: %v", lists)

	framework.Eventually(t, 60*time.Second, 200*time.Millisecond, "every watch to see every create", func() (bool, string) {
		all.mu.Lock()
		n := len(all.names)
		all.mu.Unlock()
		if n != perCluster*len(clusters) {
			return false, fmt.Sprintf("wildcard watch saw %d of %d creates", n, perCluster*len(clusters))
		}
		for _, c := range clusters {
			set := perClusterSeen[c]
			set.mu.Lock()
			n := len(set.names)
			set.mu.Unlock()
			if n != perCluster {
				return false, fmt.Sprintf("watch in %s saw %d of %d creates", c, n, perCluster)
			}
		}
		return true, ""
	})
	// A watch without resourceVersion starts at etcd's current revision: after
	// a secret write the configmap cache reaches it only through a progress
	// notification (with none, the watch ends in "Too large resource version").
	if _, err := clients[clusters[0]].CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "after-writes"},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	late, err := wildcard.CoreV1().ConfigMaps("").Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("wildcard watch after a secret write: %v", err)
	}
	defer late.Stop()
	if _, err := clients[clusters[1]].CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "late"},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for seen := false; !seen; {
		select {
		case ev, ok := <-late.ResultChan():
			if !ok {
				t.Fatal("the wildcard watch started after a secret write ended before the next create")
			}
			if ev.Type == watch.Error {
				t.Fatalf("the wildcard watch started after a secret write failed: %v", ev.Object)
			}
			cm, isCM := ev.Object.(*corev1.ConfigMap)
			seen = isCM && cm.Name == "late" && ev.Type == watch.Added
		case <-ctx.Done():
			t.Fatal("no event for the create after the secret write")
		}
	}

	// After the writes, a LIST in each cluster holds exactly its own objects
	// (and the namespace's kube-root-ca.crt).
	for _, c := range clusters {
		list, err := clients[c].CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, item := range list.Items {
			if strings.HasPrefix(item.Name, "cm-") {
				n++
			}
		}
		framework.RequireEqual(t, n, perCluster, "benchmark configmaps listed in "+c)
	}
}
