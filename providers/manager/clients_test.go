package manager

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestClusterTransport: a request of the shared client goes to the
// workspace of its context, and without one it is refused, never sent.
func TestClusterTransport(t *testing.T) {
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got = append(got, r.URL.Path) }))
	defer srv.Close()
	rt := &clusterTransport{next: http.DefaultTransport}
	url := srv.URL + "/services/apiexport/root/x/clusters/" + clusterPlaceholder + "/apis/g/v1/things"

	req, _ := http.NewRequestWithContext(context.WithValue(context.Background(), clusterKey{}, "abc123"), http.MethodGet, url, nil)
	resp, err := rt.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if want := "/services/apiexport/root/x/clusters/abc123/apis/g/v1/things"; len(got) != 1 || got[0] != want {
		t.Fatalf("server saw %v, want [%s]", got, want)
	}
	if req.URL.Path == got[0] {
		t.Error("the caller's request was modified")
	}

	req, _ = http.NewRequest(http.MethodGet, url, nil)
	if _, err := rt.RoundTrip(req); err == nil {
		t.Error("a request without a workspace was sent")
	}
	if len(got) != 1 {
		t.Errorf("server saw %v after the refused request", got)
	}
}
