package bench

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// RunOptions bound a Run.
type RunOptions struct {
	// Total is the number of operations to execute (at most).
	Total int
	// Workers is the number of concurrent workers; values < 1 mean 1.
	Workers int
	// MaxErrors stops the run once more than MaxErrors operations failed.
	// A negative value never stops on errors.
	MaxErrors int
}

// RunResult is the outcome of a Run.
type RunResult struct {
	Workers   int             `json:"workers"`
	Attempted int             `json:"attempted"`
	Ops       int             `json:"ops"` // successful operations
	Errors    int             `json:"errors"`
	Elapsed   time.Duration   `json:"elapsed"`
	Latencies []time.Duration `json:"-"` // successful operations only, unordered
	FirstErr  error           `json:"-"`
	// Aborted is true when the run ended early (context done or too many
	// errors) before all Total operations were attempted.
	Aborted bool `json:"aborted"`
}

// Rate is successful operations per second of wall-clock time.
func (r RunResult) Rate() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.Ops) / r.Elapsed.Seconds()
}

// Summary summarizes the latencies of the successful operations.
func (r RunResult) Summary() Summary { return Summarize(r.Latencies) }

// Err returns a descriptive error if any operation failed or the run was
// aborted, nil otherwise.
func (r RunResult) Err() error {
	switch {
	case r.Errors > 0 && r.FirstErr != nil:
		return fmt.Errorf("%d of %d operations failed (aborted=%v), first error: %w", r.Errors, r.Attempted, r.Aborted, r.FirstErr)
	case r.Aborted:
		return fmt.Errorf("run aborted after %d operations", r.Attempted)
	}
	return nil
}

// Run executes fn for i in [0, opts.Total) on opts.Workers goroutines. Each
// worker pulls the next index from a shared counter, so exactly Total calls
// are made unless ctx ends or the error budget is exhausted. fn receives the
// worker number and the operation index; its latency is recorded when it
// returns nil.
func Run(ctx context.Context, opts RunOptions, fn func(ctx context.Context, worker, i int) error) RunResult {
	workers := max(opts.Workers, 1)
	if opts.Total > 0 && workers > opts.Total {
		workers = opts.Total
	}
	res := RunResult{Workers: workers}
	if opts.Total <= 0 {
		return res
	}

	var (
		next     atomic.Int64
		failures atomic.Int64
		stop     atomic.Bool
		mu       sync.Mutex
		wg       sync.WaitGroup
	)
	perWorker := make([][]time.Duration, workers)
	attempted := make([]int, workers)

	start := time.Now()
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lat := make([]time.Duration, 0, opts.Total/workers+1)
			for !stop.Load() && ctx.Err() == nil {
				i := int(next.Add(1) - 1)
				if i >= opts.Total {
					break
				}
				attempted[w]++
				t0 := time.Now()
				err := fn(ctx, w, i)
				d := time.Since(t0)
				if err != nil {
					n := failures.Add(1)
					mu.Lock()
					if res.FirstErr == nil {
						res.FirstErr = err
					}
					mu.Unlock()
					if opts.MaxErrors >= 0 && n > int64(opts.MaxErrors) {
						stop.Store(true)
					}
					continue
				}
				lat = append(lat, d)
			}
			perWorker[w] = lat
		}()
	}
	wg.Wait()
	res.Elapsed = time.Since(start)

	for w := range workers {
		res.Attempted += attempted[w]
		res.Latencies = append(res.Latencies, perWorker[w]...)
	}
	res.Ops = len(res.Latencies)
	res.Errors = int(failures.Load())
	res.Aborted = res.Attempted < opts.Total
	return res
}
