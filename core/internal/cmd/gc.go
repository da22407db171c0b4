package cmd

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// The core's garbage collector runs with GOGC=100 while the server is
// quiet and gets more room under allocation load: when collections come
// less than busyInterval apart, the heap may grow up to twice the live heap
// before the next one (GOGC=200), but never more than maxExtraHeap above
// what GOGC=100 would allow. Writes allocate ~90 KB each in kube's request
// path, so a write load collects every second or so and marking alone takes
// ~10 % of the server's CPU; half as many collections save half of that for
// at most maxExtraHeap of RSS under load. At rest collections are minutes
// apart and the idle heap is what GOGC=100 gives.
const (
	busyInterval = 5 * time.Second
	maxExtraHeap = 64 << 20
	maxGCPercent = 200
)

// gcPercent is the GOGC for the next cycle, given the live heap after the
// last collection and the time since the one before.
func gcPercent(live uint64, sinceLast time.Duration) int {
	if sinceLast >= busyInterval || live == 0 {
		return 100
	}
	// GOGC=p lets the heap reach live*(1+p/100): the extra room over
	// GOGC=100 is live*(p-100)/100, kept at most maxExtraHeap.
	p := 100 + int(uint64(maxExtraHeap)*100/live)
	return min(p, maxGCPercent)
}

// tuneGC sets the core's GOGC at the end of every collection (see
// gcPercent), unless GOGC or GOMEMLIMIT was set in the environment: an
// operator's choice wins.
func tuneGC() {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	t := &gcTuner{percent: 100, last: time.Now(), sample: newLiveSample()}
	t.arm()
}

func newLiveSample() []metrics.Sample {
	return []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
}

type gcTuner struct {
	percent int
	last    time.Time
	sample  []metrics.Sample
}

// arm sets a finalizer on a fresh object: it runs after the next
// collection, and arms again.
func (t *gcTuner) arm() {
	runtime.SetFinalizer(&gcSentinel{t}, func(s *gcSentinel) { s.t.collected() })
}

type gcSentinel struct{ t *gcTuner }

func (t *gcTuner) collected() {
	now := time.Now()
	metrics.Read(t.sample)
	var live uint64
	if t.sample[0].Value.Kind() == metrics.KindUint64 {
		live = t.sample[0].Value.Uint64()
	}
	if p := gcPercent(live, now.Sub(t.last)); p != t.percent {
		debug.SetGCPercent(p)
		t.percent = p
	}
	t.last = now
	t.arm()
}
