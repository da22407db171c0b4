package bench

import (
	"testing"
	"time"
)

func ms(v ...int) []time.Duration {
	out := make([]time.Duration, len(v))
	for i, x := range v {
		out[i] = time.Duration(x) * time.Millisecond
	}
	return out
}

func TestPercentile(t *testing.T) {
	hundred := make([]time.Duration, 100)
	for i := range hundred {
		hundred[i] = time.Duration(i+1) * time.Millisecond
	}
	cases := []struct {
		name   string
		sorted []time.Duration
		p      float64
		want   time.Duration
	}{
		{"empty", nil, 50, 0},
		{"single p0", ms(7), 0, 7 * time.Millisecond},
		{"single p50", ms(7), 50, 7 * time.Millisecond},
		{"single p99", ms(7), 99, 7 * time.Millisecond},
		{"two p50", ms(1, 2), 50, 1 * time.Millisecond},
		{"two p51", ms(1, 2), 51, 2 * time.Millisecond},
		{"two p99", ms(1, 2), 99, 2 * time.Millisecond},
		{"hundred p0", hundred, 0, 1 * time.Millisecond},
		{"hundred p1", hundred, 1, 1 * time.Millisecond},
		{"hundred p50", hundred, 50, 50 * time.Millisecond},
		{"hundred p90", hundred, 90, 90 * time.Millisecond},
		{"hundred p99", hundred, 99, 99 * time.Millisecond},
		{"hundred p99.5", hundred, 99.5, 100 * time.Millisecond},
		{"hundred p100", hundred, 100, 100 * time.Millisecond},
		{"clamp high", hundred, 250, 100 * time.Millisecond},
		{"clamp low", hundred, -3, 1 * time.Millisecond},
		{"ten p50", ms(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), 50, 5 * time.Millisecond},
		{"ten p99", ms(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), 99, 10 * time.Millisecond},
		{"three p50", ms(10, 20, 30), 50, 20 * time.Millisecond},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Percentile(c.sorted, c.p); got != c.want {
				t.Errorf("Percentile(p=%v) = %v, want %v", c.p, got, c.want)
			}
		})
	}
}

func TestSummarizeDoesNotReorderInput(t *testing.T) {
	in := ms(30, 10, 20, 40)
	s := Summarize(in)
	if in[0] != 30*time.Millisecond {
		t.Fatalf("input modified: %v", in)
	}
	want := Summary{N: 4, Min: 10 * time.Millisecond, Mean: 25 * time.Millisecond, P50: 20 * time.Millisecond,
		P90: 40 * time.Millisecond, P99: 40 * time.Millisecond, Max: 40 * time.Millisecond}
	if s != want {
		t.Fatalf("Summarize = %+v, want %+v", s, want)
	}
	if (Summarize(nil) != Summary{}) {
		t.Fatal("Summarize(nil) not zero")
	}
}
