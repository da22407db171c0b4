package webhook

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// clock is a settable time for the breaker.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func newTestBreaker() (*Breaker, *clock) {
	c := &clock{t: time.Unix(1_000_000, 0)}
	b := NewBreaker(time.Second, 4*time.Second)
	b.now = c.now
	return b, c
}

func TestBreakerStates(t *testing.T) {
	b, c := newTestBreaker()
	admit := func(what string, wantOK, wantProbe bool) {
		t.Helper()
		if ok, probe := b.admit(); ok != wantOK || probe != wantProbe {
			t.Fatalf("%s: admit() = %v, %v; want %v, %v", what, ok, probe, wantOK, wantProbe)
		}
	}
	admit("closed", true, false)
	b.record(false, succeeded)
	admit("closed after a success", true, false)
	b.record(false, failed)
	admit("open right after a failure", false, false)
	c.add(999 * time.Millisecond)
	admit("open before the back-off passed", false, false)
	c.add(time.Millisecond)
	admit("after the back-off: the probe", true, true)
	admit("while the probe is out", false, false)
	b.record(true, failed)
	c.add(time.Second)
	admit("a failed probe doubles the back-off (1s of 2s)", false, false)
	c.add(time.Second)
	admit("the second probe", true, true)
	b.record(true, failed)
	c.add(4 * time.Second)
	admit("the third probe (4s: the maximum)", true, true)
	b.record(true, failed)
	c.add(4 * time.Second)
	admit("the back-off stays at the maximum", true, true)
	b.record(true, undecided)
	admit("a probe whose caller left lets the next call probe", true, true)
	b.record(true, succeeded)
	admit("closed after a successful probe", true, false)
	b.record(false, failed)
	admit("open again after a failure", false, false)
	c.add(time.Second)
	admit("the back-off starts again at the minimum", true, true)
}

func TestBreakerIgnoresLeavingCallers(t *testing.T) {
	b, _ := newTestBreaker()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	b.record(false, judge(ctx, nil, context.Canceled))
	if ok, _ := b.admit(); !ok {
		t.Fatalf("a caller that went away opened the breaker")
	}
	b.record(false, judge(context.Background(), &http.Response{StatusCode: 503, Header: http.Header{"Retry-After": {"1"}}}, nil))
	if ok, _ := b.admit(); !ok {
		t.Fatalf("a 503 with Retry-After opened the breaker")
	}
	b.record(false, judge(context.Background(), &http.Response{StatusCode: 500, Header: http.Header{}}, nil))
	if ok, _ := b.admit(); ok {
		t.Fatalf("a 500 left the breaker closed")
	}
}

// TestBreakerTransportHungWebhook puts the breaker in front of a real
// HTTP server that stops answering: the first call times out, the
// following ones fail at once without reaching the server, a probe after
// the back-off reaches it, and once it answers again calls go through.
func TestBreakerTransportHungWebhook(t *testing.T) {
	var hung atomic.Bool
	var received atomic.Int32
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		received.Add(1)
		if hung.Load() {
			<-release
		}
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	defer close(release)

	b, c := newTestBreaker()
	client := &http.Client{Transport: b.RoundTripper(http.DefaultTransport), Timeout: 100 * time.Millisecond}
	get := func() error {
		resp, err := client.Get(srv.URL)
		if err == nil {
			resp.Body.Close()
		}
		return err
	}
	if err := get(); err != nil {
		t.Fatalf("call to the healthy server: %v", err)
	}
	hung.Store(true)
	if err := get(); err == nil || errors.Is(err, ErrUnavailable) {
		t.Fatalf("call to the hung server: want its timeout, got %v", err)
	}
	before := received.Load()
	for i := 0; i < 20; i++ {
		if err := get(); !errors.Is(err, ErrUnavailable) {
			t.Fatalf("call %d while the breaker is open: want ErrUnavailable, got %v", i, err)
		}
	}
	if got := received.Load(); got != before {
		t.Fatalf("the hung server received %d calls while the breaker was open, want none", got-before)
	}
	c.add(time.Second)
	if err := get(); err == nil || errors.Is(err, ErrUnavailable) {
		t.Fatalf("the probe after the back-off: want it to reach the server and time out, got %v", err)
	}
	if got := received.Load(); got != before+1 {
		t.Fatalf("the server received %d calls for one probe", got-before)
	}
	hung.Store(false)
	c.add(2 * time.Second)
	if err := get(); err != nil {
		t.Fatalf("the probe once the server answers again: %v", err)
	}
	if err := get(); err != nil {
		t.Fatalf("a call after the breaker closed: %v", err)
	}
}
