package scoped

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/go-logr/logr"
	mcrecorder "github.com/kcp-dev/multicluster-provider/pkg/events/recorder"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// vwServer serves the discovery of a virtual workspace with config maps
// and records every other request (method and path), answering with a
// config map whose data holds the request's path.
func vwServer(t *testing.T) (*httptest.Server, func() []string) {
	t.Helper()
	var mu sync.Mutex
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch {
		case strings.HasSuffix(r.URL.Path, "/clusters/*/api"):
			json.NewEncoder(w).Encode(metav1.APIVersions{Versions: []string{"v1"}})
			return
		case strings.HasSuffix(r.URL.Path, "/clusters/*/apis"):
			json.NewEncoder(w).Encode(metav1.APIGroupList{})
			return
		case strings.HasSuffix(r.URL.Path, "/clusters/*/api/v1"):
			json.NewEncoder(w).Encode(metav1.APIResourceList{GroupVersion: "v1", APIResources: []metav1.APIResource{
				{Name: "configmaps", Namespaced: true, Kind: "ConfigMap", Verbs: metav1.Verbs{"get", "list", "create"}},
			}})
			return
		}
		mu.Lock()
		seen = append(seen, r.Method+" "+r.URL.Path)
		mu.Unlock()
		io.Copy(io.Discard, r.Body)
		json.NewEncoder(w).Encode(corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "x"}, Data: map[string]string{"path": r.URL.Path}})
	}))
	return srv, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), seen...)
	}
}

// TestClusterRequestsGoToTheWorkspace: the clusters of one endpoint share
// its client, and each one's writes and API reads reach its own workspace.
func TestClusterRequestsGoToTheWorkspace(t *testing.T) {
	srv, seen := vwServer(t)
	defer srv.Close()
	const vw = "/services/apiexport/root/x"
	e, err := NewEndpoint(&rest.Config{Host: srv.URL + vw}, Options{Scheme: scheme.Scheme, Recorders: mcrecorder.NewManager(scheme.Scheme, logr.Discard())})
	if err != nil {
		t.Fatal(err)
	}
	a, err := e.Cluster("abc")
	if err != nil {
		t.Fatal(err)
	}
	b, err := e.Cluster("def")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := a.GetConfig().Host, srv.URL+vw+"/clusters/abc"; got != want {
		t.Errorf("cluster abc's config host %q, want %q", got, want)
	}
	if a.GetHTTPClient() != b.GetHTTPClient() || a.GetRESTMapper() != b.GetRESTMapper() {
		t.Error("two clusters of one endpoint do not share the HTTP client and mapper")
	}

	ctx := context.Background()
	for _, c := range []*Cluster{a, b} {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "x"}}
		if err := c.GetClient().Create(ctx, cm); err != nil {
			t.Fatal(err)
		}
	}
	var got corev1.ConfigMap
	if err := b.GetAPIReader().Get(ctx, client.ObjectKey{Namespace: "default", Name: "x"}, &got); err != nil {
		t.Fatal(err)
	}
	if want := vw + "/clusters/def/api/v1/namespaces/default/configmaps/x"; got.Data["path"] != want {
		t.Errorf("cluster def's API read answered from %q, want %q", got.Data["path"], want)
	}
	want := []string{
		"POST " + vw + "/clusters/abc/api/v1/namespaces/default/configmaps",
		"POST " + vw + "/clusters/def/api/v1/namespaces/default/configmaps",
		"GET " + vw + "/clusters/def/api/v1/namespaces/default/configmaps/x",
	}
	if s := seen(); strings.Join(s, "\n") != strings.Join(want, "\n") {
		t.Errorf("the server saw\n%s\nwant\n%s", strings.Join(s, "\n"), strings.Join(want, "\n"))
	}
	if err := a.GetCache().Start(ctx); err == nil {
		t.Error("a workspace's cache view started on its own")
	}
}
