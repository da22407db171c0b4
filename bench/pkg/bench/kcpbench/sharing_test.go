package kcpbench

import (
	"strings"
	"testing"
	"time"
)

func TestWidgetNamesNest(t *testing.T) {
	// The 100 objects over 20 consumers are a subset of the 10,000 over
	// 100, and each set has no duplicates.
	large := map[[2]any]bool{}
	for j := range 10000 {
		c, n := widgetName(j, 100)
		k := [2]any{c, n}
		if large[k] {
			t.Fatalf("duplicate %v", k)
		}
		large[k] = true
	}
	perConsumer := map[int]int{}
	for j := range 100 {
		c, n := widgetName(j, 20)
		if !large[[2]any{c, n}] {
			t.Fatalf("small object %d (%d, %s) not in the large set", j, c, n)
		}
		perConsumer[c]++
	}
	if len(perConsumer) != 20 || perConsumer[0] != 5 || perConsumer[19] != 5 {
		t.Fatalf("spread %v", perConsumer)
	}
	if c, n := widgetName(7, 20); c != 7 || n != "w-00000" {
		t.Fatalf("widgetName(7, 20) = %d %s", c, n)
	}
}

func TestWildcardURL(t *testing.T) {
	for _, in := range []string{"https://h:6443/services/apiexport/abc/bench.meshplane.io", "https://h:6443/services/apiexport/abc/bench.meshplane.io/"} {
		if got := wildcardURL(in); got != "https://h:6443/services/apiexport/abc/bench.meshplane.io/clusters/*/apis/bench.meshplane.io/v1/widgets" {
			t.Errorf("wildcardURL(%q) = %s", in, got)
		}
	}
}

func TestCountItems(t *testing.T) {
	n, err := countItems(strings.NewReader(`{"kind":"WidgetList","apiVersion":"bench.meshplane.io/v1","metadata":{},"items":[{"a":1},{"b":[2]},{}]}`))
	if err != nil || n != 3 {
		t.Fatalf("%d %v", n, err)
	}
	if n, err := countItems(strings.NewReader(`{"kind":"WidgetList","items":null}`)); err != nil || n != 0 {
		t.Fatalf("empty: %d %v", n, err)
	}
	if _, err := countItems(strings.NewReader(`{"kind":"Status"}`)); err == nil {
		t.Fatal("a Status is not a list")
	}
	if _, err := countItems(strings.NewReader(`{`)); err == nil {
		t.Fatal("truncated JSON")
	}
}

func TestPaceSchedule(t *testing.T) {
	b := time.Unix(100, 0)
	if got := paceSchedule(b, 0, 50); !got.Equal(b) {
		t.Fatal(got)
	}
	if got := paceSchedule(b, 50, 50); !got.Equal(b.Add(time.Second)) {
		t.Fatal(got)
	}
	if got := paceSchedule(b, 3, 4); !got.Equal(b.Add(750 * time.Millisecond)) {
		t.Fatal(got)
	}
}

func TestEventRecorder(t *testing.T) {
	r := newEventRecorder("ev-", 2)
	t0 := time.Unix(5, 0)
	r.record("w-00001", t0) // not ours
	r.record("ev-00000", t0)
	r.record("ev-00000", t0.Add(time.Second)) // first receipt counts
	select {
	case <-r.all:
		t.Fatal("complete too early")
	default:
	}
	r.record("ev-00001", t0)
	<-r.all
	if at, ok := r.at("ev-00000"); !ok || !at.Equal(t0) {
		t.Fatal(at, ok)
	}
	if _, ok := r.at("w-00001"); ok {
		t.Fatal("foreign name recorded")
	}
	r.record("ev-00002", t0) // beyond want: must not close twice
}
