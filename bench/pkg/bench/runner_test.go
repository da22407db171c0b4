package bench

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestRunExecutesEachIndexOnce(t *testing.T) {
	const total = 1000
	var mu sync.Mutex
	seen := make(map[int]int)
	var maxConc, cur atomic.Int32
	res := Run(context.Background(), RunOptions{Total: total, Workers: 8, MaxErrors: 0}, func(_ context.Context, w, i int) error {
		if w < 0 || w >= 8 {
			t.Errorf("bad worker %d", w)
		}
		c := cur.Add(1)
		for {
			m := maxConc.Load()
			if c <= m || maxConc.CompareAndSwap(m, c) {
				break
			}
		}
		time.Sleep(10 * time.Microsecond)
		cur.Add(-1)
		mu.Lock()
		seen[i]++
		mu.Unlock()
		return nil
	})
	if res.Ops != total || res.Attempted != total || res.Errors != 0 || res.Aborted || len(res.Latencies) != total {
		t.Fatalf("unexpected result %+v", res)
	}
	for i := range total {
		if seen[i] != 1 {
			t.Fatalf("index %d executed %d times", i, seen[i])
		}
	}
	if maxConc.Load() > 8 {
		t.Fatalf("concurrency %d exceeds 8 workers", maxConc.Load())
	}
	if res.Rate() <= 0 || res.Err() != nil {
		t.Fatalf("rate %v err %v", res.Rate(), res.Err())
	}
}

func TestRunStopsOnErrors(t *testing.T) {
	boom := errors.New("boom")
	res := Run(context.Background(), RunOptions{Total: 1000, Workers: 1, MaxErrors: 2}, func(context.Context, int, int) error {
		return boom
	})
	if res.Attempted != 3 || res.Errors != 3 || res.Ops != 0 || !res.Aborted || !errors.Is(res.Err(), boom) {
		t.Fatalf("unexpected result %+v (err %v)", res, res.Err())
	}
}

func TestRunHonoursContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	res := Run(ctx, RunOptions{Total: 1000, Workers: 2, MaxErrors: -1}, func(_ context.Context, _, i int) error {
		if i == 10 {
			cancel()
		}
		return nil
	})
	if !res.Aborted || res.Attempted >= 1000 || res.Err() == nil {
		t.Fatalf("unexpected result %+v", res)
	}
}

func TestRunZeroTotal(t *testing.T) {
	res := Run(context.Background(), RunOptions{Total: 0, Workers: 4}, func(context.Context, int, int) error {
		t.Fatal("must not be called")
		return nil
	})
	if res.Ops != 0 || res.Aborted || res.Err() != nil || res.Rate() != 0 {
		t.Fatalf("unexpected result %+v", res)
	}
}
