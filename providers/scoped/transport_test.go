package scoped

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
)

// TestClusterTransport: a request of the shared client goes to the
// workspace of its context on the shard that serves it, and without one
// (or outside the shared client's base) it is refused, never sent.
func TestClusterTransport(t *testing.T) {
	var mu sync.Mutex
	var got []string
	record := func(shard string) *httptest.Server {
		return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			defer mu.Unlock()
			got = append(got, shard+" "+r.URL.Path)
		}))
	}
	root, b := record("root"), record("b")
	defer root.Close()
	defer b.Close()
	const base = "/services/apiexport/root/x/clusters/" + clusterPlaceholder
	rt := &clusterTransport{next: http.DefaultTransport, placeholder: base}
	shared := root.URL + base + "/apis/g/v1/things"

	send := func(workspace string) error {
		ctx := context.Background()
		if workspace != "" {
			u, err := url.Parse(workspace)
			if err != nil {
				t.Fatal(err)
			}
			ctx = context.WithValue(ctx, clusterKey{}, u)
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, shared, nil)
		resp, err := rt.RoundTrip(req)
		if err == nil {
			resp.Body.Close()
			if req.URL.String() != shared {
				t.Error("the caller's request was modified")
			}
		}
		return err
	}
	if err := send(root.URL + "/services/apiexport/root/x/clusters/abc123"); err != nil {
		t.Fatal(err)
	}
	if err := send(b.URL + "/services/apiexport/root/x/clusters/def456"); err != nil {
		t.Fatal(err)
	}
	want := []string{"root /services/apiexport/root/x/clusters/abc123/apis/g/v1/things", "b /services/apiexport/root/x/clusters/def456/apis/g/v1/things"}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("servers saw %q, want %q", got, want)
	}

	if err := send(""); err == nil {
		t.Error("a request without a workspace was sent")
	}
	req, _ := http.NewRequestWithContext(context.WithValue(context.Background(), clusterKey{}, &url.URL{Scheme: "http", Host: "x"}), http.MethodGet, root.URL+"/elsewhere", nil)
	if _, err := rt.RoundTrip(req); err == nil {
		t.Error("a request outside the shared client's base was sent")
	}
	if len(got) != 2 {
		t.Errorf("servers saw %q after the refused requests", got)
	}
}
