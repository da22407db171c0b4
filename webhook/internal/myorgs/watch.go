package myorgs

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	corev1alpha1 "github.com/meshplane/meshplane/apis/core/v1alpha1"
)

// Watch keeps idx up to date from every RoleAssignment of the workspaces
// bound to core.platform-mesh.io (a wildcard watch through the export's
// virtual workspace, vw) and from the Stores and Accounts of root:orgs
// (orgsCluster tells its logical cluster; asked until it answers). No
// object is kept: each event goes into the index at once, and only the
// keys of what was seen are remembered (for a relist's deletions). It
// returns when ctx ends.
func Watch(ctx context.Context, vw *rest.Config, orgsCluster func(context.Context) (string, error), idx *Index, log logr.Logger) error {
	var orgs string
	for {
		var err error
		if orgs, err = orgsCluster(ctx); err == nil {
			break
		}
		log.Info("reading root:orgs' logical cluster failed; retrying", "err", err.Error())
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(time.Second):
		}
	}
	client := func(cluster string) (*dynamic.DynamicClient, error) {
		cfg := rest.CopyConfig(vw)
		cfg.Host = strings.TrimSuffix(cfg.Host, "/") + "/clusters/" + cluster
		return dynamic.NewForConfig(cfg)
	}
	all, err := client("*")
	if err != nil {
		return err
	}
	inOrgs, err := client(orgs)
	if err != nil {
		return err
	}
	gv := corev1alpha1.SchemeGroupVersion
	kinds := []struct {
		resource string
		client   *dynamic.DynamicClient
		apply    func(u *unstructured.Unstructured, gone bool)
	}{
		{"roleassignments", all, func(u *unstructured.Unstructured, gone bool) {
			kind, _, _ := unstructured.NestedString(u.Object, "spec", "subject", "kind")
			name, _, _ := unstructured.NestedString(u.Object, "spec", "subject", "name")
			if gone {
				kind = ""
			}
			idx.SetRoleAssignment(clusterOf(u), u.GetName(), kind, name)
		}},
		{"stores", inOrgs, func(u *unstructured.Unstructured, gone bool) {
			var users []string
			if !gone {
				ts, _, _ := unstructured.NestedSlice(u.Object, "spec", "tuples")
				for _, t := range ts {
					if m, ok := t.(map[string]any); ok {
						if user, ok := m["user"].(string); ok {
							users = append(users, user)
						}
					}
				}
			}
			idx.SetStore(clusterOf(u), u.GetName(), users)
		}},
		{"accounts", inOrgs, func(u *unstructured.Unstructured, gone bool) {
			typ, _, _ := unstructured.NestedString(u.Object, "spec", "type")
			creator, _, _ := unstructured.NestedString(u.Object, "spec", "creator")
			if gone || typ != string(corev1alpha1.AccountTypeOrg) {
				creator = ""
			}
			idx.SetAccount(clusterOf(u), u.GetName(), creator)
		}},
	}
	var wg sync.WaitGroup
	for _, k := range kinds {
		ri := k.client.Resource(gv.WithResource(k.resource))
		lw := &cache.ListWatch{
			ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return ri.List(ctx, o) },
			WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
				return ri.Watch(ctx, o)
			},
		}
		r := cache.NewReflector(lw, &unstructured.Unstructured{}, newKeyStore(k.apply), 0)
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.RunWithContext(ctx)
		}()
		log.Info("indexing organizations' grants", "resource", k.resource+"."+gv.Group)
	}
	wg.Wait()
	return nil
}

const clusterAnnotation = "kcp.io/cluster"

func clusterOf(u *unstructured.Unstructured) string { return u.GetAnnotations()[clusterAnnotation] }

// keyStore is the reflector's store: it hands every object to apply and
// remembers only the cluster and name of what it holds, so that a relist
// (Replace) can forget what is gone.
type keyStore struct {
	apply func(u *unstructured.Unstructured, gone bool)
	mu    sync.Mutex
	keys  map[string]struct{} // "<cluster>/<name>"
	rv    string
}

var _ cache.Store = &keyStore{}

func newKeyStore(apply func(u *unstructured.Unstructured, gone bool)) *keyStore {
	return &keyStore{apply: apply, keys: map[string]struct{}{}}
}

func (s *keyStore) put(obj any, gone bool) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return
	}
	key := clusterOf(u) + "/" + u.GetName()
	s.mu.Lock()
	defer s.mu.Unlock()
	if gone {
		delete(s.keys, key)
	} else {
		s.keys[key] = struct{}{}
	}
	if rv := u.GetResourceVersion(); rv != "" {
		s.rv = rv
	}
	s.apply(u, gone)
}

func (s *keyStore) Add(obj any) error    { s.put(obj, false); return nil }
func (s *keyStore) Update(obj any) error { s.put(obj, false); return nil }
func (s *keyStore) Delete(obj any) error { s.put(obj, true); return nil }

// Replace applies a relist: every listed object, and the deletion of
// every held key the list no longer has.
func (s *keyStore) Replace(list []any, rv string) error {
	seen := make(map[string]struct{}, len(list))
	for _, obj := range list {
		if u, ok := obj.(*unstructured.Unstructured); ok {
			seen[clusterOf(u)+"/"+u.GetName()] = struct{}{}
			s.put(u, false)
		}
	}
	s.mu.Lock()
	var gone []string
	for k := range s.keys {
		if _, ok := seen[k]; !ok {
			gone = append(gone, k)
		}
	}
	s.mu.Unlock()
	for _, k := range gone {
		cluster, name, _ := strings.Cut(k, "/")
		u := &unstructured.Unstructured{Object: map[string]any{}}
		u.SetName(name)
		u.SetAnnotations(map[string]string{clusterAnnotation: cluster})
		s.put(u, true)
	}
	s.Bookmark(rv)
	return nil
}

func (s *keyStore) List() []any { return nil }
func (s *keyStore) ListKeys() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.keys))
	for k := range s.keys {
		out = append(out, k)
	}
	return out
}
func (s *keyStore) Get(any) (any, bool, error)         { return nil, false, nil }
func (s *keyStore) GetByKey(string) (any, bool, error) { return nil, false, nil }
func (s *keyStore) Resync() error                      { return nil }

// Bookmark and LastStoreSyncResourceVersion implement cache.Store: the
// last resource version seen.
func (s *keyStore) Bookmark(rv string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rv = rv
}

func (s *keyStore) LastStoreSyncResourceVersion() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rv
}
