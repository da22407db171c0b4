// Package runner runs level-triggered reconcilers from a rate-limited work
// queue, the way every Meshplane controller works.
package runner

import (
	"context"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
)

// Reconcile handles one key. A positive requeue asks to see the key again
// after that long; an error retries with backoff.
type Reconcile func(ctx context.Context, key string) (requeue time.Duration, err error)

// Runner is a work queue with workers.
type Runner struct {
	Name      string
	Workers   int
	Reconcile Reconcile
	queue     workqueue.TypedRateLimitingInterface[string]
}

// New returns a runner; call Run to start it. Keys may be added before.
func New(name string, workers int, r Reconcile) *Runner {
	return &Runner{Name: name, Workers: workers, Reconcile: r,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: name})}
}

// Add enqueues key.
func (r *Runner) Add(key string) { r.queue.Add(key) }

// AddAfter enqueues key after d.
func (r *Runner) AddAfter(key string, d time.Duration) { r.queue.AddAfter(key, d) }

// Run works until ctx is done.
func (r *Runner) Run(ctx context.Context) {
	defer r.queue.ShutDown()
	for i := 0; i < r.Workers; i++ {
		go wait.UntilWithContext(ctx, r.work, time.Second)
	}
	<-ctx.Done()
}

func (r *Runner) work(ctx context.Context) {
	for {
		key, quit := r.queue.Get()
		if quit {
			return
		}
		requeue, err := r.Reconcile(ctx, key)
		switch {
		case apierrors.IsConflict(err):
			// Somebody wrote first; the next round reads their version.
			klog.V(4).InfoS("Reconcile conflict", "controller", r.Name, "key", key)
			r.queue.AddRateLimited(key)
		case err != nil:
			klog.ErrorS(err, "Reconcile failed", "controller", r.Name, "key", key)
			r.queue.AddRateLimited(key)
		case requeue > 0:
			r.queue.Forget(key)
			r.queue.AddAfter(key, requeue)
		default:
			r.queue.Forget(key)
		}
		r.queue.Done(key)
	}
}
