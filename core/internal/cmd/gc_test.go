package cmd

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

func TestGCPercent(t *testing.T) {
	const mib = 1 << 20
	for _, tt := range []struct {
		name      string
		live      uint64
		sinceLast time.Duration
		want      int
	}{
		{"quiet server", 30 * mib, 2 * time.Minute, 100},
		{"first collection after a pause", 30 * mib, busyInterval, 100},
		{"busy, small heap: twice the live heap of room", 30 * mib, 500 * time.Millisecond, 200},
		{"busy, 64 MiB live: the bound is reached exactly", 64 * mib, time.Second, 200},
		{"busy, 128 MiB live: 64 MiB more than GOGC=100", 128 * mib, time.Second, 150},
		{"busy, 1 GiB live", 1024 * mib, time.Second, 106},
		{"no live heap measured", 0, time.Second, 100},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := gcPercent(tt.live, tt.sinceLast); got != tt.want {
				t.Errorf("gcPercent(%d MiB, %s) = %d, want %d", tt.live/mib, tt.sinceLast, got, tt.want)
			}
		})
	}
}

// TestTunerSetsGOGC runs the tuner's end-of-collection step on this
// process's real live heap: right after the previous collection it raises
// the runtime's GOGC, after a pause it sets it back to 100.
func TestTunerSetsGOGC(t *testing.T) {
	runtime.GC()
	tuner := &gcTuner{percent: 100, last: time.Now(), sample: newLiveSample()}
	tuner.collected()
	if got := debug.SetGCPercent(tuner.percent); tuner.percent <= 100 || got != tuner.percent {
		t.Fatalf("after a collection right after the last one: tuner %d, runtime GOGC %d, want both > 100", tuner.percent, got)
	}
	tuner.last = time.Now().Add(-busyInterval)
	tuner.collected()
	if got := debug.SetGCPercent(100); tuner.percent != 100 || got != 100 {
		t.Fatalf("after a pause: tuner %d, runtime GOGC %d, want 100", tuner.percent, got)
	}
}
