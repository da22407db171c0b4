package latency

import (
	"testing"
	"time"
)

func TestPercentile(t *testing.T) {
	var r Recorder
	if got := r.Percentile(99); got != 0 {
		t.Errorf("empty recorder: p99 = %v, want 0", got)
	}
	for i := 100; i >= 1; i-- {
		r.Add(time.Duration(i) * time.Millisecond)
	}
	for _, tc := range []struct {
		p    float64
		want time.Duration
	}{{50, 50 * time.Millisecond}, {99, 99 * time.Millisecond}, {100, 100 * time.Millisecond}, {0.1, time.Millisecond}} {
		if got := r.Percentile(tc.p); got != tc.want {
			t.Errorf("p%v of 1..100 ms = %v, want %v", tc.p, got, tc.want)
		}
	}
}
