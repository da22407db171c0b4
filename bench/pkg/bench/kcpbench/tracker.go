package kcpbench

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Tracker records when expected objects were created and when a watch
// first saw them ready. Keys are arbitrary strings (workspace paths,
// "<path>|apibinding", ...). Safe for concurrent use.
type Tracker struct {
	mu      sync.Mutex
	entries map[string]*entry
}

type entry struct {
	created time.Time // start of the create request
	ready   time.Time // first time the object was seen ready
	failed  bool      // its creation failed; it will never be ready
	done    chan struct{}
}

// ErrFailed is returned by Wait for a key marked failed.
var ErrFailed = errors.New("creation failed")

// NewTracker returns an empty tracker.
func NewTracker() *Tracker { return &Tracker{entries: map[string]*entry{}} }

func (t *Tracker) get(key string) *entry {
	e := t.entries[key]
	if e == nil {
		e = &entry{done: make(chan struct{})}
		t.entries[key] = e
	}
	return e
}

// Expect registers key with its create time; call it before the create
// request is sent so that no ready event can precede it.
func (t *Tracker) Expect(key string, created time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.get(key).created = created
}

// MarkReady records that key was seen ready at time at; only the first
// call per key counts. It reports whether this call marked it.
func (t *Tracker) MarkReady(key string, at time.Time) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	e := t.get(key)
	if !e.ready.IsZero() || e.failed {
		return false
	}
	e.ready = at
	close(e.done)
	return true
}

// Fail records that key's creation failed, so that waiters give up. It
// has no effect on a key that is ready already.
func (t *Tracker) Fail(key string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e := t.get(key)
	if !e.ready.IsZero() || e.failed {
		return
	}
	e.failed = true
	close(e.done)
}

// IsReady reports whether key was seen ready.
func (t *Tracker) IsReady(key string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	e := t.entries[key]
	return e != nil && !e.ready.IsZero()
}

// Wait blocks until key is ready, failed or ctx ends.
func (t *Tracker) Wait(ctx context.Context, key string) error {
	t.mu.Lock()
	e := t.get(key)
	t.mu.Unlock()
	select {
	case <-e.done:
		t.mu.Lock()
		defer t.mu.Unlock()
		if e.failed {
			return fmt.Errorf("%s: %w", key, ErrFailed)
		}
		return nil
	case <-ctx.Done():
		return fmt.Errorf("waiting for %s: %w", key, context.Cause(ctx))
	}
}

// WaitAll waits until all keys are ready or ctx ends; it returns the
// number of ready keys and, if not all became ready, an error naming the
// first missing one.
func (t *Tracker) WaitAll(ctx context.Context, keys []string) (int, error) {
	for _, k := range keys {
		if err := t.Wait(ctx, k); err != nil {
			return t.CountReady(keys), fmt.Errorf("%d of %d ready: %w", t.CountReady(keys), len(keys), err)
		}
	}
	return len(keys), nil
}

// CountReady returns how many of keys are ready.
func (t *Tracker) CountReady(keys []string) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for _, k := range keys {
		if e := t.entries[k]; e != nil && !e.ready.IsZero() {
			n++
		}
	}
	return n
}

// Span describes a batch of tracked keys.
type Span struct {
	Expected   int
	Ready      int
	FirstStart time.Time       // earliest create start
	LastReady  time.Time       // latest ready time
	Latencies  []time.Duration // create start to ready, ready keys with a create time only
}

// Elapsed is the time from the first create to the last ready.
func (s Span) Elapsed() time.Duration {
	if s.FirstStart.IsZero() || s.LastReady.IsZero() {
		return 0
	}
	return s.LastReady.Sub(s.FirstStart)
}

// Rate is ready keys per second over Elapsed.
func (s Span) Rate() float64 {
	if e := s.Elapsed(); e > 0 {
		return float64(s.Ready) / e.Seconds()
	}
	return 0
}

// Span summarizes keys.
func (t *Tracker) Span(keys []string) Span {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := Span{Expected: len(keys)}
	for _, k := range keys {
		e := t.entries[k]
		if e == nil {
			continue
		}
		if !e.created.IsZero() && (s.FirstStart.IsZero() || e.created.Before(s.FirstStart)) {
			s.FirstStart = e.created
		}
		if e.ready.IsZero() {
			continue
		}
		s.Ready++
		if e.ready.After(s.LastReady) {
			s.LastReady = e.ready
		}
		if !e.created.IsZero() {
			s.Latencies = append(s.Latencies, max(e.ready.Sub(e.created), 0))
		}
	}
	return s
}
