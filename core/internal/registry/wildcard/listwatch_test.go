package wildcard_test

import (
	"context"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	apisv1alpha1 "github.com/kcp-dev/sdk/apis/apis/v1alpha1"
	corev1alpha1 "github.com/kcp-dev/sdk/apis/core/v1alpha1"
	tenancyv1alpha1 "github.com/kcp-dev/sdk/apis/tenancy/v1alpha1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	kcpcache "github.com/kcp-dev/apimachinery/v2/pkg/cache"

	builtinapi "github.com/meshplane/meshplane/core/internal/apis/builtin"
	"github.com/meshplane/meshplane/core/internal/embeddedetcd"
	"github.com/meshplane/meshplane/core/internal/registry/builtin"
	"github.com/meshplane/meshplane/core/internal/registry/local"
	"github.com/meshplane/meshplane/core/internal/registry/wildcard"
	"github.com/meshplane/meshplane/core/internal/storage/clusterstore"
)

// TestInformerRelistDropsDeleted revokes a ClusterRoleBinding while the
// informer's watch is down. After the relist the binding must be gone from
// the informer's store and its handlers told once: kcp's store cannot
// delete the tombstone a relist produces, so without the fix the revoked
// binding stayed (and kept granting) until a restart.
func TestInformerRelistDropsDeleted(t *testing.T) {
	bindings := local.Client[*rbacv1.ClusterRoleBinding]{Storage: startStorage(t)[rbacv1.SchemeGroupVersion]["clusterrolebindings"].(local.Storage)}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, c := range []string{"kept", "revoked"} {
		if _, err := bindings.Create(ctx, c, "", binding()); err != nil {
			t.Fatal(err)
		}
	}
	f := &faulty{Storage: bindings.Storage}
	inf := wildcard.NewInformer(f, &rbacv1.ClusterRoleBinding{})
	var deletes atomic.Int32
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{DeleteFunc: func(obj any) {
		if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = t.Obj
		}
		if b, ok := obj.(*rbacv1.ClusterRoleBinding); ok && b.Annotations["kcp.io/cluster"] == "revoked" {
			deletes.Add(1)
		}
	}})
	go inf.RunWithContext(ctx)
	has := func(c string) bool {
		_, ok, _ := inf.GetIndexer().GetByKey(kcpcache.ToClusterAwareKey(c, "", "admin"))
		return ok
	}
	eventually(t, "the informer to sync", func() bool { return inf.HasSynced() && has("kept") && has("revoked") })

	// The watch breaks and the storage refuses; meanwhile one binding is
	// revoked and one granted. The informer then relists.
	f.down(true)
	if err := bindings.Delete(ctx, "revoked", "", "admin"); err != nil {
		t.Fatal(err)
	}
	if _, err := bindings.Create(ctx, "added", "", binding()); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the informer to retry", func() bool { return f.refused.Load() > 0 })
	f.down(false)
	eventually(t, "the informer to see the new binding", func() bool { return has("added") })
	eventually(t, "the informer to drop the revoked binding", func() bool { return !has("revoked") && has("kept") })
	eventually(t, "the handlers to be told", func() bool { return deletes.Load() > 0 })
	// A later event proves the handlers had their chance to be told twice.
	if err := bindings.Delete(ctx, "added", "", "admin"); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the informer to follow its watch again", func() bool { return !has("added") })
	if n := deletes.Load(); n != 1 {
		t.Errorf("the handlers were told of %d deletes of the revoked binding, want 1", n)
	}
}

func binding() *rbacv1.ClusterRoleBinding {
	return &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "admin"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "admin"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "alice"}},
	}
}

// faulty is a storage whose watches can be cut: while down, its open
// watches end, a new watch is expired (the reflector must relist) and a
// list fails.
type faulty struct {
	wildcard.Storage
	mu      sync.Mutex
	isDown  bool
	watches []watch.Interface
	refused atomic.Int32
}

func (f *faulty) down(d bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.isDown = d
	if d {
		for _, w := range f.watches {
			w.Stop()
		}
		f.watches = nil
	}
}

func (f *faulty) List(ctx context.Context, opts *metainternalversion.ListOptions) (runtime.Object, error) {
	f.mu.Lock()
	d := f.isDown
	f.mu.Unlock()
	if d {
		f.refused.Add(1)
		return nil, apierrors.NewServiceUnavailable("down")
	}
	return f.Storage.List(ctx, opts)
}

func (f *faulty) Watch(ctx context.Context, opts *metainternalversion.ListOptions) (watch.Interface, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.isDown {
		f.refused.Add(1)
		return nil, apierrors.NewResourceExpired("down")
	}
	w, err := f.Storage.Watch(ctx, opts)
	if err == nil {
		f.watches = append(f.watches, w)
	}
	return w, err
}

// startStorage is the server's built-in storage on a real etcd.
func startStorage(t *testing.T) builtin.Storage {
	t.Helper()
	e, err := embeddedetcd.Start(t.TempDir(), freePort(t), freePort(t), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	tlsConfig, err := e.ClientTLS.Config()
	if err != nil {
		t.Fatal(err)
	}
	backend, err := clusterstore.NewBackendWithInProcessKV(e.InProcessClient(), []string{e.ClientURL}, "/registry", time.Hour, tlsConfig)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = backend.Close() })
	s, err := builtin.NewStorage(&clusterstore.RESTOptionsGetter{
		Backend: backend, Scheme: builtinapi.Scheme, Serializer: builtinapi.Codecs,
		MediaType: "application/vnd.kubernetes.protobuf", Prefixes: builtin.StoragePrefixes(), Cache: true,
		MediaTypes: map[string]string{tenancyv1alpha1.SchemeGroupVersion.Group: "application/json", corev1alpha1.SchemeGroupVersion.Group: "application/json",
			apisv1alpha1.SchemeGroupVersion.Group: "application/json"},
		StorageVersions: builtin.StorageVersions(),
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
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
