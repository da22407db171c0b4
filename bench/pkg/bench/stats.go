// Package bench holds the measuring building blocks of meshplane-bench:
// latency statistics, RSS sampling, a bounded N-worker runner, server
// start/readiness helpers and the report renderer. It depends on the
// standard library only; the Kubernetes and etcd phases live in the
// kubebench and etcdbench sub-packages.
package bench

import (
	"math"
	"slices"
	"time"
)

// Percentile returns the p-th percentile (0 <= p <= 100) of an ascending
// sorted slice using the nearest-rank method: the smallest value such that at
// least p percent of the samples are less than or equal to it. It returns 0
// for an empty slice. p is clamped to [0, 100]; p == 0 yields the minimum.
func Percentile(sorted []time.Duration, p float64) time.Duration {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	if math.IsNaN(p) || p <= 0 {
		return sorted[0]
	}
	if p >= 100 {
		return sorted[n-1]
	}
	rank := int(math.Ceil(p / 100 * float64(n)))
	if rank < 1 {
		rank = 1
	}
	if rank > n {
		rank = n
	}
	return sorted[rank-1]
}

// Summary is a compact description of a latency sample.
type Summary struct {
	N    int           `json:"n"`
	Min  time.Duration `json:"min"`
	Mean time.Duration `json:"mean"`
	P50  time.Duration `json:"p50"`
	P90  time.Duration `json:"p90"`
	P99  time.Duration `json:"p99"`
	Max  time.Duration `json:"max"`
}

// Summarize computes a Summary. The input is not modified.
func Summarize(samples []time.Duration) Summary {
	if len(samples) == 0 {
		return Summary{}
	}
	s := slices.Clone(samples)
	slices.Sort(s)
	var sum time.Duration
	for _, d := range s {
		sum += d
	}
	return Summary{
		N:    len(s),
		Min:  s[0],
		Mean: sum / time.Duration(len(s)),
		P50:  Percentile(s, 50),
		P90:  Percentile(s, 90),
		P99:  Percentile(s, 99),
		Max:  s[len(s)-1],
	}
}
