package routing

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/meshplane/meshplane/proxy/internal/index"
)

// TestShardRefusesBeforeReadingBody: a shard that answers 403 before
// reading the whole request body (authorization comes first), to an HTTP/2
// client still sending it. The client stops sending when it sees the 403;
// the answer must still reach its end instead of hanging (the proxy wires
// in sdk/proxybody).
func TestShardRefusesBeforeReadingBody(t *testing.T) {
	shard := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The body's first bytes have come through the proxy: its body
		// write is under way, waiting for more.
		if _, err := io.ReadFull(r.Body, make([]byte, 5)); err != nil {
			t.Errorf("shard reading the body's first bytes: %v", err)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusForbidden)
		_, _ = w.Write([]byte(`{"kind":"Status","code":403}`))
	}))
	shard.EnableHTTP2 = true
	shard.StartTLS()
	defer shard.Close()

	i := index.New()
	i.SetShard(index.Shard{Name: "root", BaseURL: shard.URL}, false)
	i.SetCluster("root", "root", "root", false)
	proxy := httptest.NewUnstartedServer(New(i, Transports{Anonymous: shard.Client().Transport}, func() bool { return true }))
	proxy.EnableHTTP2 = true
	proxy.StartTLS()
	defer proxy.Close()

	// The body's first bytes go out, the rest never comes unless the
	// client's transport gives up on it.
	body, sending := io.Pipe()
	defer sending.Close()
	go func() { _, _ = sending.Write([]byte(`{"apiVersion":"v1",`)) }()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, proxy.URL+"/clusters/root/api/v1/namespaces/default/configmaps", body)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	res, err := proxy.Client().Do(req)
	if err != nil {
		t.Fatalf("request: %v", err)
	}
	defer res.Body.Close()
	if res.ProtoMajor != 2 {
		t.Fatalf("the client spoke %s to the proxy, want HTTP/2", res.Proto)
	}
	got, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("reading the answer after %v: %v (the proxy never ended it)", time.Since(start), err)
	}
	if res.StatusCode != http.StatusForbidden || string(got) != `{"kind":"Status","code":403}` {
		t.Errorf("answer %d %q, want the shard's 403 Status", res.StatusCode, got)
	}
}
