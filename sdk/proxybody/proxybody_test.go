package proxybody

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"
	"time"
)

// TestEarlyRefusal: the server behind the proxy answers 403 before reading
// the body of an HTTP/2 client still sending it; with Release the client
// gets the whole answer (a long one, sent after the status, so that it is
// still arriving when Release closes the client's body), without it the
// proxy never ends it.
func TestEarlyRefusal(t *testing.T) {
	for _, tc := range []struct {
		name    string
		release bool
	}{{"with Release", true}, {"without", false}} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.release {
				if err := refusedThroughProxy(t, true, true, 3*time.Second); err != nil {
					t.Fatalf("with Release: %v", err)
				}
				return
			}
			// The hang depends on the proxy's body write being under way
			// when the answer comes; on a loaded machine it can end first
			// once in a while, so the control needs one hang in three.
			for attempt := 1; attempt <= 3; attempt++ {
				if err := refusedThroughProxy(t, false, true, 3*time.Second); err != nil {
					return
				}
				t.Logf("attempt %d: without Release the answer ended too", attempt)
			}
			t.Fatalf("without Release the answer ended in three attempts: the test no longer shows the hang it guards against")
		})
	}
}

// TestEarlyRefusalOverHTTP1: the same refusal with the proxy speaking
// HTTP/1.1 to the server. That transport does not give up its body write
// on the answer, so closing the client's body under it would fail the
// write and close the connection the answer is still arriving on: Release
// must leave it alone, and no hang needs it there.
func TestEarlyRefusalOverHTTP1(t *testing.T) {
	if err := refusedThroughProxy(t, true, false, 10*time.Second); err != nil {
		t.Fatalf("with Release: %v", err)
	}
}

// refusedThroughProxy sends a body that never finishes through a reverse
// proxy to a server that refuses at once, and reads the whole answer
// within wait.
func refusedThroughProxy(t *testing.T, release, h2 bool, wait time.Duration) error {
	refusal := `{"kind":"Status","code":403,"message":"` + strings.Repeat("x", 256<<10) + `"}`
	backend := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The first bytes of the body have come through the proxy: its
		// body write is under way, waiting for more.
		if _, err := io.ReadFull(r.Body, make([]byte, 5)); err != nil {
			t.Errorf("backend reading the body's first bytes: %v", err)
		}
		if (r.ProtoMajor == 2) != h2 {
			t.Errorf("the proxy spoke %s to the backend", r.Proto)
		}
		if !h2 {
			// An HTTP/1.1 server would otherwise wait for the rest of
			// the body before answering, to keep the connection.
			w.Header().Set("Connection", "close")
		}
		w.WriteHeader(http.StatusForbidden)
		w.(http.Flusher).Flush()
		time.Sleep(50 * time.Millisecond)
		_, _ = w.Write([]byte(refusal))
	}))
	backend.EnableHTTP2 = h2
	backend.StartTLS()
	defer backend.Close()
	target, _ := url.Parse(backend.URL)
	rp := &httputil.ReverseProxy{
		Transport:     backend.Client().Transport,
		FlushInterval: -1,
		Rewrite:       func(pr *httputil.ProxyRequest) { pr.SetURL(target) },
	}
	if release {
		rp.ModifyResponse = Release
	}
	front := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rp.ServeHTTP(w, r.WithContext(WithClientBody(r.Context(), r)))
	}))
	front.EnableHTTP2 = true
	front.StartTLS()
	defer front.Close()

	body, sending := io.Pipe()
	defer sending.Close()
	go func() { _, _ = sending.Write([]byte(`{"apiVersion":"v1",`)) }()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, front.URL+"/api/v1/namespaces/default/configmaps", body)
	if err != nil {
		t.Fatal(err)
	}
	res, err := front.Client().Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if res.ProtoMajor != 2 {
		t.Fatalf("the client spoke %s to the proxy, want HTTP/2", res.Proto)
	}
	got, err := io.ReadAll(res.Body)
	if err != nil {
		return err
	}
	if res.StatusCode != http.StatusForbidden || string(got) != refusal {
		t.Errorf("answer %d of %d bytes, want the backend's 403 of %d bytes", res.StatusCode, len(got), len(refusal))
	}
	return nil
}
