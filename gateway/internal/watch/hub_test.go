package watch

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/meshplane/meshplane/gateway/internal/kube"
)

// fakeCore answers lists with resourceVersion 5 and streams the events
// sent to it on every watch.
type fakeCore struct {
	watches atomic.Int32
	mu      sync.Mutex
	streams []chan string
}

func (f *fakeCore) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Query().Get("watch") == "" {
		fmt.Fprint(w, `{"metadata":{"resourceVersion":"5"},"items":[]}`)
		return
	}
	if r.Header.Get("Authorization") == "Bearer denied" {
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprint(w, `{"kind":"Status","reason":"Forbidden","message":"no"}`)
		return
	}
	f.watches.Add(1)
	ch := make(chan string, 10)
	f.mu.Lock()
	f.streams = append(f.streams, ch)
	f.mu.Unlock()
	w.WriteHeader(http.StatusOK)
	w.(http.Flusher).Flush()
	for {
		select {
		case <-r.Context().Done():
			return
		case ev := <-ch:
			fmt.Fprintln(w, ev)
			w.(http.Flusher).Flush()
		}
	}
}

func (f *fakeCore) send(ev string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, ch := range f.streams {
		ch <- ev
	}
}

func TestHubSharesWatchesPerToken(t *testing.T) {
	core := &fakeCore{}
	srv := httptest.NewServer(core)
	defer srv.Close()
	kc, err := kube.New(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	h := NewHub(kc, 4)
	ctx := context.Background()
	path := "/clusters/a/api/v1/namespaces/default/configmaps"

	var stops []func()
	var chans []<-chan Event
	for _, token := range []string{"alice", "alice", "alice", "bob"} {
		ch, stop, err := h.Subscribe(ctx, token, path, "", "", "")
		if err != nil {
			t.Fatal(err)
		}
		chans, stops = append(chans, ch), append(stops, stop)
	}
	if _, _, err := h.Subscribe(ctx, "carol", path, "", "", ""); err != ErrTooMany {
		t.Errorf("a fifth subscription with Max 4: err %v, want ErrTooMany", err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for core.watches.Load() < 2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := core.watches.Load(); n != 2 {
		t.Fatalf("watches against the core for 3 alice and 1 bob subscriptions: %d, want 2", n)
	}
	if subs, watches := h.Stats(); subs != 4 || watches != 2 {
		t.Errorf("Stats() = %d, %d; want 4, 2", subs, watches)
	}
	core.send(`{"type":"ADDED","object":{"metadata":{"name":"x","resourceVersion":"6"}}}`)
	for i, ch := range chans {
		select {
		case ev := <-ch:
			if ev.Type != "ADDED" {
				t.Errorf("subscriber %d: event %+v", i, ev)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("subscriber %d got no event", i)
		}
	}
	for _, stop := range stops {
		stop()
		stop() // idempotent
	}
	deadline = time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if subs, watches := h.Stats(); subs == 0 && watches == 0 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if subs, watches := h.Stats(); subs != 0 || watches != 0 {
		t.Errorf("after every stop: Stats() = %d, %d; want 0, 0", subs, watches)
	}
}

func TestHubReportsForbidden(t *testing.T) {
	srv := httptest.NewServer(&fakeCore{})
	defer srv.Close()
	kc, _ := kube.New(&rest.Config{Host: srv.URL})
	h := NewHub(kc, 0)
	ch, stop, err := h.Subscribe(context.Background(), "denied", "/clusters/a/api/v1/configmaps", "", "", "")
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	select {
	case ev := <-ch:
		if ev.Err == nil {
			t.Fatalf("event %+v, want an error", ev)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no error event for a forbidden watch")
	}
}
