// Package watch shares Kubernetes watches between subscribers. Subscribers
// with the same workspace, resource, namespace, selectors and bearer token
// share one watch against the core: sharing per token keeps authorization
// exact (every event a subscriber gets, the core sent to its own token),
// while many subscriptions of one user or client cost one watch.
package watch

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/meshplane/meshplane/gateway/internal/kube"
)

// Event is one watch event.
type Event struct {
	Type   string
	Object map[string]any
	// Err ends the stream.
	Err error
}

// Key identifies a shareable watch.
type Key struct {
	Path, LabelSelector, FieldSelector, tokenHash string
}

// Hub owns the watches.
type Hub struct {
	kube *kube.Client
	// Max bounds the subscriptions open at once (0: no bound).
	Max int

	mu      sync.Mutex
	shared  map[Key]*stream
	open    int
	streams int
	// access are the checks open streams need (see access.go).
	access map[accessKey]*accessEntry
}

// NewHub returns an empty hub.
func NewHub(c *kube.Client, max int) *Hub {
	return &Hub{kube: c, Max: max, shared: map[Key]*stream{}, access: map[accessKey]*accessEntry{}}
}

// Stats reports open subscriptions and watches against the core.
func (h *Hub) Stats() (subscriptions, watches int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.open, h.streams
}

// ErrTooMany is returned when Max subscriptions are open.
var ErrTooMany = errors.New("too many subscriptions are open on this gateway; try again later")

type stream struct {
	key     Key
	token   string
	cancel  context.CancelFunc
	subs    map[chan Event]bool
	rv      string
	shared  bool
	timeout time.Duration
	// access is the stream's access check, when checked is set.
	access  accessKey
	checked bool
}

// Subscribe opens a subscription to collection path (see
// kube.ResourcePath). With resourceVersion "", events start now and the
// watch is shared; with one, a watch of its own resumes after it. The
// returned stop ends the subscription.
func (h *Hub) Subscribe(ctx context.Context, token, path, labelSel, fieldSel, resourceVersion string) (<-chan Event, func(), error) {
	return h.SubscribeWithTimeout(ctx, token, path, labelSel, fieldSel, resourceVersion, 0)
}

// SubscribeWithTimeout is Subscribe with each watch request against the
// core bounded to timeout (the core's default when 0); the stream
// re-watches from the last resourceVersion, so subscribers see no gap.
// Short requests let the core shut down without waiting for the stream.
func (h *Hub) SubscribeWithTimeout(ctx context.Context, token, path, labelSel, fieldSel, resourceVersion string, timeout time.Duration) (<-chan Event, func(), error) {
	sum := sha256.Sum256([]byte(token))
	key := Key{Path: path, LabelSelector: labelSel, FieldSelector: fieldSel, tokenHash: hex.EncodeToString(sum[:])}
	ch := make(chan Event, 256)

	h.mu.Lock()
	if h.Max > 0 && h.open >= h.Max {
		h.mu.Unlock()
		return nil, nil, ErrTooMany
	}
	h.open++
	s, ok := h.shared[key]
	if ok && resourceVersion == "" {
		s.subs[ch] = true
		h.mu.Unlock()
		return ch, h.stopper(s, ch), nil
	}
	h.mu.Unlock()

	// A new stream: find where "now" is before returning, so that nothing
	// the subscriber does after subscribing is missed.
	rv := resourceVersion
	if rv == "" {
		var err error
		rv, err = h.currentRV(ctx, token, path, labelSel, fieldSel)
		if err != nil {
			h.mu.Lock()
			h.open--
			h.mu.Unlock()
			return nil, nil, err
		}
	}
	sctx, cancel := context.WithCancel(context.Background())
	s = &stream{key: key, token: token, cancel: cancel, subs: map[chan Event]bool{ch: true}, rv: rv, shared: resourceVersion == "", timeout: timeout}
	h.mu.Lock()
	if s.shared {
		if other, ok := h.shared[key]; ok {
			// Another subscriber won the race; join its stream.
			other.subs[ch] = true
			h.mu.Unlock()
			cancel()
			return ch, h.stopper(other, ch), nil
		}
		h.shared[key] = s
	}
	h.track(s)
	h.streams++
	h.mu.Unlock()
	go h.run(sctx, s)
	return ch, h.stopper(s, ch), nil
}

func (h *Hub) stopper(s *stream, ch chan Event) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			h.mu.Lock()
			defer h.mu.Unlock()
			h.open--
			if _, ok := s.subs[ch]; ok {
				delete(s.subs, ch)
				close(ch)
			}
			if len(s.subs) == 0 {
				s.cancel()
				if h.shared[s.key] == s {
					delete(h.shared, s.key)
				}
			}
		})
	}
}

func (h *Hub) currentRV(ctx context.Context, token, path, labelSel, fieldSel string) (string, error) {
	q := url.Values{"limit": {"1"}}
	if labelSel != "" {
		q.Set("labelSelector", labelSel)
	}
	if fieldSel != "" {
		q.Set("fieldSelector", fieldSel)
	}
	b, err := h.kube.Do(ctx, token, kube.Request{Method: "GET", Path: path, Query: q})
	if err != nil {
		return "", err
	}
	var l struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(b, &l); err != nil {
		return "", err
	}
	return l.Metadata.ResourceVersion, nil
}

// run keeps the watch open until every subscriber has gone.
func (h *Hub) run(ctx context.Context, s *stream) {
	defer func() {
		h.mu.Lock()
		h.streams--
		if h.shared[s.key] == s {
			delete(h.shared, s.key)
		}
		h.untrack(s)
		h.mu.Unlock()
	}()
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		err := h.watchOnce(ctx, s)
		if ctx.Err() != nil {
			return
		}
		var ke *kube.Error
		if errors.As(err, &ke) {
			switch {
			case ke.Code == http.StatusGone || ke.Reason == "Expired":
				if !s.shared {
					h.fail(s, fmt.Errorf("resourceVersion %s is too old: %s", s.rv, ke.Message))
					return
				}
				rv, err := h.currentRV(ctx, s.token, s.key.Path, s.key.LabelSelector, s.key.FieldSelector)
				if err == nil {
					s.rv = rv
					continue
				}
			case ke.Code == http.StatusUnauthorized || ke.Code == http.StatusForbidden || ke.Code == http.StatusNotFound:
				h.fail(s, ke)
				return
			}
		}
		if err == nil {
			backoff = 100 * time.Millisecond
			continue
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		if backoff < 5*time.Second {
			backoff *= 2
		}
	}
}

// fail ends the stream's subscriptions with err.
func (h *Hub) fail(s *stream, err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for ch := range s.subs {
		endWith(ch, Event{Err: err})
		delete(s.subs, ch)
	}
}

func (h *Hub) watchOnce(ctx context.Context, s *stream) error {
	q := url.Values{"watch": {"1"}, "allowWatchBookmarks": {"true"}, "resourceVersion": {s.rv}}
	if s.timeout > 0 {
		q.Set("timeoutSeconds", strconv.Itoa(int(s.timeout.Seconds())))
	}
	if s.key.LabelSelector != "" {
		q.Set("labelSelector", s.key.LabelSelector)
	}
	if s.key.FieldSelector != "" {
		q.Set("fieldSelector", s.key.FieldSelector)
	}
	resp, err := h.kube.Open(ctx, s.token, kube.Request{Method: "GET", Path: s.key.Path, Query: q})
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	dec := json.NewDecoder(bufio.NewReader(resp.Body))
	for {
		var ev struct {
			Type   string         `json:"type"`
			Object map[string]any `json:"object"`
		}
		if err := dec.Decode(&ev); err != nil {
			return err
		}
		md, _ := ev.Object["metadata"].(map[string]any)
		if rv, ok := md["resourceVersion"].(string); ok && rv != "" {
			s.rv = rv
		}
		switch ev.Type {
		case "BOOKMARK":
			continue
		case "ERROR":
			code, _ := ev.Object["code"].(float64)
			msg, _ := ev.Object["message"].(string)
			reason, _ := ev.Object["reason"].(string)
			return &kube.Error{Code: int(code), Reason: reason, Message: msg}
		}
		h.mu.Lock()
		for ch := range s.subs {
			select {
			case ch <- Event{Type: ev.Type, Object: ev.Object}:
			default:
				// A subscriber that does not keep up loses its stream rather
				// than slowing the others down.
				delete(s.subs, ch)
				close(ch)
			}
		}
		h.mu.Unlock()
	}
}
