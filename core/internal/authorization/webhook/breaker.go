package webhook

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"time"

	"k8s.io/klog/v2"
)

// ErrUnavailable is what a call to the webhook fails with while the
// breaker is open: the webhook failed (timed out, refused, answered 5xx)
// and is not asked again until its back-off has passed.
var ErrUnavailable = errors.New("the authorization webhook is unavailable (not asked again until its back-off has passed)")

// Back-off of an open breaker: the first failure waits MinBackoff before
// one request probes the webhook again, each failed probe doubles it up to
// MaxBackoff.
const (
	MinBackoff = time.Second
	MaxBackoff = 10 * time.Second
)

// Breaker is a circuit breaker in front of the webhook, shared by the
// authorizer and the rules client. Closed, every call goes to the webhook;
// a failure opens it: calls fail at once with ErrUnavailable (the request
// is denied unless RBAC allows it) until the back-off has passed, then one
// call probes the webhook while the others still fail at once; the probe's
// success closes the breaker, its failure opens it for twice as long. So a
// hung webhook holds one request per back-off, not every request.
type Breaker struct {
	min, max time.Duration
	now      func() time.Time

	mu      sync.Mutex
	open    bool
	backoff time.Duration
	retryAt time.Time
	probing bool
}

// NewBreaker returns a closed breaker with back-off from min to max.
func NewBreaker(min, max time.Duration) *Breaker {
	return &Breaker{min: min, max: max, now: time.Now}
}

// admit says whether a call may go to the webhook and whether it is the
// probe of an open breaker.
func (b *Breaker) admit() (ok, probe bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.open {
		return true, false
	}
	if b.probing || b.now().Before(b.retryAt) {
		return false, false
	}
	b.probing = true
	return true, true
}

// outcome records the end of an admitted call: failed, or undecided when
// the caller gave up before the webhook answered (a client that goes away
// says nothing about the webhook, and must not open the breaker for
// everyone).
type outcome int

const (
	succeeded outcome = iota
	failed
	undecided
)

func (b *Breaker) record(probe bool, o outcome) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if probe {
		b.probing = false
	}
	switch o {
	case succeeded:
		if b.open {
			klog.InfoS("authorization webhook answers again; asking it for every request")
		}
		b.open, b.backoff = false, 0
	case failed:
		switch {
		case !b.open:
			b.backoff = b.min
		case probe:
			b.backoff = min(2*b.backoff, b.max)
		default:
			return // an older call failing while open changes nothing
		}
		if !b.open {
			klog.InfoS("authorization webhook failed; denying what RBAC does not allow without asking it until it answers again", "retryIn", b.backoff)
		}
		b.open, b.retryAt = true, b.now().Add(b.backoff)
	}
}

// RoundTripper returns rt behind the breaker: a call fails at once with
// ErrUnavailable while the breaker is open, and a transport error or a 5xx
// without Retry-After (a 503 with Retry-After is the webhook saying "ask
// again", as kube's client does) counts as a failure.
func (b *Breaker) RoundTripper(rt http.RoundTripper) http.RoundTripper {
	return &breakerTransport{breaker: b, next: rt}
}

type breakerTransport struct {
	breaker *Breaker
	next    http.RoundTripper
}

func (t *breakerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ok, probe := t.breaker.admit()
	if !ok {
		return nil, ErrUnavailable
	}
	resp, err := t.next.RoundTrip(req)
	t.breaker.record(probe, judge(req.Context(), resp, err))
	return resp, err
}

// judge tells what a webhook call says about the webhook.
func judge(ctx context.Context, resp *http.Response, err error) outcome {
	switch {
	case err != nil && errors.Is(ctx.Err(), context.Canceled):
		return undecided
	case err != nil:
		return failed // refused, reset, or the timeout (a deadline)
	case resp.StatusCode >= 500 && resp.Header.Get("Retry-After") == "":
		return failed
	}
	return succeeded
}

// WrapperFunc is Breaker.RoundTripper as a rest.Config's WrapTransport.
func (b *Breaker) WrapperFunc() func(http.RoundTripper) http.RoundTripper {
	return b.RoundTripper
}
