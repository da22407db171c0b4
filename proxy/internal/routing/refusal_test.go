package routing

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/meshplane/meshplane/proxy/internal/index"
)

// TestConcurrentRefusals: many HTTP/2 clients send bodies without a token
// at once through the proxy's own shard transports to a shard that
// refuses them as Kubernetes does (401 before reading the body, with
// "Connection: close", a GOAWAY on HTTP/2). Every client must get the
// shard's 401: none a 502 because another caller's refusal closed the
// connection its request was on.
func TestConcurrentRefusals(t *testing.T) {
	const refusal = `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Unauthorized","code":401}`
	shard := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") == "" {
			w.Header().Set("Connection", "close")
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(refusal))
			return
		}
		_, _ = io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusCreated)
	}))
	shard.EnableHTTP2 = true
	shard.StartTLS()
	defer shard.Close()
	roots := x509.NewCertPool()
	roots.AddCert(shard.Certificate())

	i := index.New()
	i.SetShard(index.Shard{Name: "root", BaseURL: shard.URL}, false)
	i.SetCluster("root", "root", "root", false)
	proxy := httptest.NewUnstartedServer(New(i, NewTransports(&tls.Config{RootCAs: roots}, nil), func() bool { return true }))
	proxy.EnableHTTP2 = true
	proxy.StartTLS()
	defer proxy.Close()
	client := proxy.Client()

	const requests, concurrent = 800, 64
	body := []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"probe"},"data":{"k":"` + string(bytes.Repeat([]byte("v"), 512)) + `"}}`)
	var wrong, failed atomic.Int64
	var first sync.Once
	var wg sync.WaitGroup
	work := make(chan struct{})
	for range concurrent {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range work {
				code, got, err := post(client, proxy.URL+"/clusters/root/api/v1/namespaces/apps/configmaps?dryRun=All", body)
				switch {
				case err != nil:
					failed.Add(1)
					first.Do(func() { t.Errorf("request: %v", err) })
				case code != http.StatusUnauthorized || got != refusal:
					wrong.Add(1)
					first.Do(func() { t.Errorf("answer %d %s, want the shard's 401", code, got) })
				}
			}
		}()
	}
	for range requests {
		work <- struct{}{}
	}
	close(work)
	wg.Wait()
	if n, e := wrong.Load(), failed.Load(); n+e > 0 {
		t.Errorf("%d of %d refused requests got another answer than the shard's 401, %d failed", n, requests, e)
	}
}

// post sends body over HTTP/2 and returns the answer.
func post(client *http.Client, url string, body []byte) (int, string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := client.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer res.Body.Close()
	if res.ProtoMajor != 2 {
		return 0, "", &protoError{res.Proto}
	}
	got, err := io.ReadAll(res.Body)
	return res.StatusCode, string(got), err
}

type protoError struct{ proto string }

func (e *protoError) Error() string {
	return "the client spoke " + e.proto + " to the proxy, want HTTP/2"
}
