// Package latency records per-operation durations in benchmarks and
// reports percentiles (p50, p99) as benchmark metrics, for targets stated
// as a percentile rather than a mean.
//
//	var rec latency.Recorder
//	for i := 0; i < b.N; i++ {
//		start := time.Now()
//		op()
//		rec.Add(time.Since(start))
//	}
//	rec.Report(b) // p50-µs, p99-µs
package latency

import (
	"slices"
	"testing"
	"time"
)

// Recorder collects durations; its zero value is ready to use.
type Recorder struct {
	d []time.Duration
}

// Add records one duration.
func (r *Recorder) Add(d time.Duration) { r.d = append(r.d, d) }

// Percentile returns the p-th percentile (0 < p <= 100), 0 when empty.
func (r *Recorder) Percentile(p float64) time.Duration {
	if len(r.d) == 0 {
		return 0
	}
	s := slices.Clone(r.d)
	slices.Sort(s)
	i := int(float64(len(s))*p/100+0.5) - 1
	return s[min(max(i, 0), len(s)-1)]
}

// Report adds p50-µs and p99-µs to the benchmark's metrics.
func (r *Recorder) Report(b *testing.B) {
	b.ReportMetric(float64(r.Percentile(50).Nanoseconds())/1e3, "p50-µs")
	b.ReportMetric(float64(r.Percentile(99).Nanoseconds())/1e3, "p99-µs")
}
