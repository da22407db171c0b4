package kcpbench

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestTrackerSpan(t *testing.T) {
	tr := NewTracker()
	t0 := time.Unix(1000, 0)
	tr.Expect("a", t0)
	tr.Expect("b", t0.Add(time.Second))
	tr.Expect("c", t0.Add(2*time.Second))
	if !tr.MarkReady("a", t0.Add(3*time.Second)) || tr.MarkReady("a", t0.Add(9*time.Second)) {
		t.Fatal("first MarkReady must count, the second not")
	}
	tr.MarkReady("b", t0.Add(4*time.Second))
	tr.MarkReady("other", t0.Add(5*time.Second)) // not part of the span
	s := tr.Span([]string{"a", "b", "c"})
	if s.Expected != 3 || s.Ready != 2 || !s.FirstStart.Equal(t0) || !s.LastReady.Equal(t0.Add(4*time.Second)) {
		t.Fatalf("span %+v", s)
	}
	if s.Elapsed() != 4*time.Second || s.Rate() != 0.5 {
		t.Fatalf("elapsed %s rate %g", s.Elapsed(), s.Rate())
	}
	if len(s.Latencies) != 2 || s.Latencies[0]+s.Latencies[1] != 6*time.Second {
		t.Fatalf("latencies %v", s.Latencies)
	}
	if tr.CountReady([]string{"a", "c", "other", "missing"}) != 2 || !tr.IsReady("other") || tr.IsReady("c") {
		t.Fatal("CountReady/IsReady")
	}
	if (Span{}).Rate() != 0 || (Span{}).Elapsed() != 0 {
		t.Fatal("empty span")
	}
}

func TestTrackerWait(t *testing.T) {
	tr := NewTracker()
	go func() {
		time.Sleep(10 * time.Millisecond)
		tr.MarkReady("x", time.Now())
		tr.MarkReady("y", time.Now())
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if n, err := tr.WaitAll(ctx, []string{"x", "y"}); err != nil || n != 2 {
		t.Fatalf("WaitAll: %d %v", n, err)
	}
	short, cancel2 := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel2()
	n, err := tr.WaitAll(short, []string{"x", "never"})
	if err == nil || n != 1 {
		t.Fatalf("WaitAll with a missing key: %d %v", n, err)
	}
	tr.Fail("bad")
	tr.Fail("x") // ready already: no effect
	if err := tr.Wait(ctx, "bad"); !errors.Is(err, ErrFailed) {
		t.Fatalf("Wait on a failed key: %v", err)
	}
	if err := tr.Wait(ctx, "x"); err != nil || tr.MarkReady("bad", time.Now()) {
		t.Fatalf("Fail must not affect ready keys, MarkReady must not affect failed ones: %v", err)
	}
}
