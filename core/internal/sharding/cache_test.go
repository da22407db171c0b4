package sharding

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	apisv1alpha2 "github.com/kcp-dev/sdk/apis/apis/v1alpha2"
	corev1alpha1 "github.com/kcp-dev/sdk/apis/core/v1alpha1"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/client-go/rest"

	"github.com/meshplane/meshplane/core/internal/cacheserver"
	"github.com/meshplane/meshplane/core/internal/embeddedetcd"
)

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// Tokens of the test's cache server: a shard (system:masters) and a
// tenant.
const (
	shardToken  = "shard-token"
	tenantToken = "tenant-token"
)

// startCacheServer runs the cache server on a real etcd, behind
// WithCacheServer with a token authenticator; other paths are 404.
func startCacheServer(t *testing.T) (string, *cacheserver.Handler) {
	t.Helper()
	e, err := embeddedetcd.Start(t.TempDir(), freePort(t), freePort(t), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	authn := authenticator.RequestFunc(func(r *http.Request) (*authenticator.Response, bool, error) {
		switch strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ") {
		case shardToken:
			return &authenticator.Response{User: &user.DefaultInfo{Name: "shard-admin", Groups: []string{user.SystemPrivilegedGroup}}}, true, nil
		case tenantToken:
			return &authenticator.Response{User: &user.DefaultInfo{Name: "alice", Groups: []string{user.AllAuthenticated}}}, true, nil
		}
		return nil, false, nil
	})
	h := &cacheserver.Handler{Client: e.InProcessClient(), Prefix: "/meshplane-cache/", Resources: CacheResources()}
	srv := httptest.NewServer(cacheserver.WithCacheServer(http.NotFoundHandler(), h, authn))
	t.Cleanup(srv.Close)
	return srv.URL, h
}

func send(t *testing.T, method, url, token string, obj any) int {
	t.Helper()
	var body []byte
	if obj != nil {
		body, _ = json.Marshal(obj)
	}
	req, _ := http.NewRequest(method, url, bytes.NewReader(body))
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func exportObj(name string) map[string]any {
	return map[string]any{"apiVersion": "apis.kcp.io/v1alpha2", "kind": "APIExport", "metadata": map[string]any{"name": name}}
}

func exportURL(base, shard, cluster, name string) string {
	return fmt.Sprintf("%s%s/shards/%s/clusters/%s/apis/apis.kcp.io/v1alpha2/apiexports/%s", base, cacheserver.PathPrefix, shard, cluster, name)
}

// TestCacheServerShardsOnly: only shards (system:masters) write or read
// the cache server; a tenant's token, no token, and the tenant's request
// dressed as a workspace path are refused, and nothing is written.
func TestCacheServerShardsOnly(t *testing.T) {
	base, _ := startCacheServer(t)
	if code := send(t, http.MethodPut, exportURL(base, "root", "provider", "example.org"), tenantToken, exportObj("example.org")); code != http.StatusForbidden {
		t.Errorf("a tenant writing a replica: %d, want 403", code)
	}
	if code := send(t, http.MethodGet, base+cacheserver.PathPrefix+"/shards/*/clusters/*/apis/apis.kcp.io/v1alpha2/apiexports", tenantToken, nil); code != http.StatusForbidden {
		t.Errorf("a tenant listing replicas: %d, want 403", code)
	}
	if code := send(t, http.MethodPut, exportURL(base, "root", "provider", "example.org"), "", exportObj("example.org")); code != http.StatusUnauthorized {
		t.Errorf("an anonymous write: %d, want 401", code)
	}
	// A workspace path is not the cache server's: the request goes on to
	// the shard's own chain (here 404), never to the cache.
	if code := send(t, http.MethodPut, base+"/clusters/root:orgs"+cacheserver.PathPrefix+"/shards/root/clusters/provider/apis/apis.kcp.io/v1alpha2/apiexports/example.org",
		tenantToken, exportObj("example.org")); code != http.StatusNotFound {
		t.Errorf("a tenant's write through a workspace path: %d, want 404", code)
	}
	if code := send(t, http.MethodGet, exportURL(base, "root", "provider", "example.org"), shardToken, nil); code != http.StatusNotFound {
		t.Errorf("after the refused writes the replica exists (%d)", code)
	}
	// A shard writes; what the path does not name is refused.
	if code := send(t, http.MethodPut, exportURL(base, "root", "provider", "example.org"), shardToken, exportObj("other")); code != http.StatusBadRequest {
		t.Errorf("a write whose name is not the path's: %d, want 400", code)
	}
	if code := send(t, http.MethodPut, exportURL(base, "root", "provider", "example.org"), shardToken, exportObj("example.org")); code != http.StatusOK {
		t.Errorf("a shard's write: %d, want 200", code)
	}
	if code := send(t, http.MethodPut, base+cacheserver.PathPrefix+"/shards/root/clusters/provider/api/v1/secrets/s", shardToken, exportObj("s")); code != http.StatusNotFound {
		t.Errorf("a kind the cache does not hold: %d, want 404", code)
	}
}

// TestCacheServerReplicas: a shard's Others reads every other shard's
// objects from the cache server with one informer per kind, each object
// with its shard, leaving its own out; a delete reaches it by watch.
func TestCacheServerReplicas(t *testing.T) {
	base, _ := startCacheServer(t)
	lc := func(name string) map[string]any {
		return map[string]any{"apiVersion": "core.kcp.io/v1alpha1", "kind": "LogicalCluster", "metadata": map[string]any{"name": name}}
	}
	for shard, cluster := range map[string]string{"root": "provider", "c": "other", "b": "mine"} {
		if code := send(t, http.MethodPut, exportURL(base, shard, cluster, "example.org"), shardToken, exportObj("example.org")); code != http.StatusOK {
			t.Fatalf("writing %s's export: %d", shard, code)
		}
		u := fmt.Sprintf("%s%s/shards/%s/clusters/%s/apis/core.kcp.io/v1alpha1/logicalclusters/cluster", base, cacheserver.PathPrefix, shard, cluster)
		if code := send(t, http.MethodPut, u, shardToken, lc("cluster")); code != http.StatusOK {
			t.Fatalf("writing %s's logical cluster: %d", shard, code)
		}
	}
	s := &Shards{Self: "b", CacheServer: &rest.Config{Host: base + cacheserver.PathPrefix, BearerToken: shardToken},
		List: func(context.Context) ([]corev1alpha1.Shard, error) { return nil, nil }}
	o := s.Others()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go o.Run(ctx)
	deadline := time.Now().Add(20 * time.Second)
	for !o.HasSynced() {
		if time.Now().After(deadline) {
			t.Fatal("the replica of the cache server did not sync")
		}
		time.Sleep(50 * time.Millisecond)
	}
	obj, shard, ok := o.Get(APIExports, "provider", "example.org")
	if !ok || shard != "root" {
		t.Fatalf("root's export: found %v on shard %q", ok, shard)
	}
	if e := obj.(*apisv1alpha2.APIExport); e.Annotations[ShardAnnotation] != "root" || e.ResourceVersion == "" {
		t.Errorf("replicated export's annotations %v, resourceVersion %q", e.Annotations, e.ResourceVersion)
	}
	if got, _ := o.ShardOf("other"); got != "c" {
		t.Errorf("shard of cluster other: %q, want c", got)
	}
	if _, _, ok := o.Get(APIExports, "mine", "example.org"); ok {
		t.Error("the shard's own export is in its replica of the others")
	}
	if watches, _ := o.cost(); watches != len(CacheKinds) {
		t.Errorf("%d watches, want one per kind (%d)", watches, len(CacheKinds))
	}
	if code := send(t, http.MethodDelete, exportURL(base, "root", "provider", "example.org"), shardToken, nil); code != http.StatusOK {
		t.Fatalf("deleting root's export: %d", code)
	}
	deleted := time.Now()
	for {
		if _, _, ok := o.Get(APIExports, "provider", "example.org"); !ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the deleted export stays in the replica")
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Logf("a delete reached the replica after %s", time.Since(deleted))
}

// TestCacheServerSweep: the copies of a shard whose Shard is gone are
// deleted at the second sweep that misses it; a registered shard's stay.
func TestCacheServerSweep(t *testing.T) {
	base, h := startCacheServer(t)
	for _, shard := range []string{"root", "gone"} {
		if code := send(t, http.MethodPut, exportURL(base, shard, "c-"+shard, "example.org"), shardToken, exportObj("example.org")); code != http.StatusOK {
			t.Fatalf("writing %s's export: %d", shard, code)
		}
	}
	s := &cacheserver.Sweeper{Handler: h, Shards: func(context.Context) (map[string]bool, error) { return map[string]bool{"root": true}, nil }}
	ctx := context.Background()
	if n, err := s.Sweep(ctx); err != nil || n != 0 {
		t.Fatalf("first sweep deleted %d (%v), want 0: a shard missing once keeps its copies", n, err)
	}
	if n, err := s.Sweep(ctx); err != nil || n != 1 {
		t.Fatalf("second sweep deleted %d (%v), want gone's export", n, err)
	}
	if code := send(t, http.MethodGet, exportURL(base, "gone", "c-gone", "example.org"), shardToken, nil); code != http.StatusNotFound {
		t.Errorf("gone's export after the sweeps: %d, want 404", code)
	}
	if code := send(t, http.MethodGet, exportURL(base, "root", "c-root", "example.org"), shardToken, nil); code != http.StatusOK {
		t.Errorf("root's export after the sweeps: %d, want 200", code)
	}
}
