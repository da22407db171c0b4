package clusterstore

import (
	"context"
	"net"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/meshplane/meshplane/core/internal/clusters"
	"github.com/meshplane/meshplane/core/internal/embeddedetcd"
)

// TestWatchCacheProgressAfterLateCache covers a quiet server: a watch cache
// started after the last write watches etcd from a revision that does not
// exist yet, and etcd answers no progress request on the caches' shared
// stream until that revision does. Without a write, every other cache stays
// behind etcd and a watch-list ends in "Too large resource version" unless
// the backend's progressNudger writes.
func TestWatchCacheProgressAfterLateCache(t *testing.T) {
	backend := startBackend(t)
	ctx := clusters.WithCluster(context.Background(), "a")

	configmaps := cachedStore(t, backend, "configmaps", func() runtime.Object { return &corev1.ConfigMap{} }, func() runtime.Object { return &corev1.ConfigMapList{} })
	waitCacheReady(t, ctx, configmaps, "/configmaps", &corev1.ConfigMapList{})
	out := &corev1.ConfigMap{}
	if err := configmaps.Create(ctx, "/configmaps/default/first", &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "first", Namespace: "default"}}, out, 0); err != nil {
		t.Fatal(err)
	}
	// A write the configmap cache does not see, then a cache started after it.
	put, err := backend.Client().Put(context.Background(), "/registry/unrelated/x", "y")
	if err != nil {
		t.Fatal(err)
	}
	secrets := cachedStore(t, backend, "secrets", func() runtime.Object { return &corev1.Secret{} }, func() runtime.Object { return &corev1.SecretList{} })
	waitCacheReady(t, ctx, secrets, "/secrets", &corev1.SecretList{})

	// A client streams the configmaps' current state (client-go's watch-list,
	// on by default): the cache must first learn from etcd's progress
	// notifications that it is as fresh as etcd, with nothing written to
	// configmaps meanwhile.
	yes := true
	w, err := configmaps.Watch(ctx, "/configmaps", storage.ListOptions{
		SendInitialEvents: &yes, Recursive: true,
		Predicate: storage.SelectionPredicate{Label: labels.Everything(), Field: fields.Everything(), AllowWatchBookmarks: true},
	})
	if err != nil {
		t.Fatalf("watch-list: %v", err)
	}
	defer w.Stop()
	for {
		select {
		case ev := <-w.ResultChan():
			switch ev.Type {
			case watch.Added:
				continue
			case watch.Bookmark:
				m, _ := meta.Accessor(ev.Object)
				if m.GetAnnotations()[metav1.InitialEventsAnnotationKey] != "true" {
					continue
				}
				if rv, _ := strconv.ParseInt(m.GetResourceVersion(), 10, 64); rv < put.Header.Revision {
					t.Errorf("initial events end at %s, before etcd's revision %d", m.GetResourceVersion(), put.Header.Revision)
				}
				backend.nudger.mu.Lock()
				defer backend.nudger.mu.Unlock()
				if backend.nudger.nudges == 0 {
					t.Error("the caches were answered without a nudge: the test no longer covers a late cache")
				}
				return
			default:
				t.Fatalf("watch-list: got %s %v", ev.Type, ev.Object)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("watch-list: no end of initial events in 30s")
		}
	}
}

func startBackend(t *testing.T) *Backend {
	t.Helper()
	etcd, err := embeddedetcd.Start(t.TempDir(), freePort(t), freePort(t), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(etcd.Close)
	tlsConfig, err := etcd.ClientTLS.Config()
	if err != nil {
		t.Fatal(err)
	}
	backend, err := NewBackendWithInProcessKV(etcd.InProcessClient(), []string{etcd.ClientURL}, "/registry", time.Hour, tlsConfig)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = backend.Close() })
	return backend
}

func cachedStore(t *testing.T, b *Backend, resource string, newFunc, newListFunc func() runtime.Object) storage.Interface {
	t.Helper()
	config := &storagebackend.ConfigForResource{
		Config: storagebackend.Config{Codec: scheme.Codecs.CodecForVersions(scheme.Codecs.LegacyCodec(corev1.SchemeGroupVersion),
			scheme.Codecs.UniversalDeserializer(), corev1.SchemeGroupVersion, corev1.SchemeGroupVersion)},
		GroupResource: schema.GroupResource{Resource: resource},
	}
	s, destroy, err := b.CachedDecorator(config, "/"+resource, nil, newFunc, newListFunc, storage.DefaultNamespaceScopedAttr, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(destroy)
	return s
}

// waitCacheReady waits until the cache answers a list from itself.
func waitCacheReady(t *testing.T, ctx context.Context, s storage.Interface, key string, list runtime.Object) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := s.GetList(ctx, key, storage.ListOptions{ResourceVersion: "0", Recursive: true, Predicate: storage.Everything}, list)
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("cache for %s not ready: %v", key, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
