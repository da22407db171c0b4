// Package runner runs level-triggered reconcilers from a rate-limited work
// queue, the way every Meshplane controller works: a typed Key per object,
// one EnqueueFrom per informer, and a logger carrying the key's cluster,
// namespace and name on every line a reconcile writes.
//
// It is not a controller itself, so it lives outside pkg/controllers: the
// CRD controller in pkg/crd uses it too, and a package below the
// controllers must not import one of them.
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
// after that long; an error retries with backoff. The logger in ctx
// (klog.FromContext) carries the controller and the key.
type Reconcile func(ctx context.Context, key Key) (requeue time.Duration, err error)

// Runner is a work queue with workers.
type Runner struct {
	Name      string
	Workers   int
	Reconcile Reconcile
	queue     workqueue.TypedRateLimitingInterface[Key]
}

// New returns a runner; call Run to start it. Keys may be added before.
func New(name string, workers int, r Reconcile) *Runner {
	return &Runner{Name: name, Workers: workers, Reconcile: r,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[Key](),
			workqueue.TypedRateLimitingQueueConfig[Key]{Name: name})}
}

// conflictRetry is when a key whose write met a conflict is looked at again.
const conflictRetry = 50 * time.Millisecond

// Add enqueues key.
func (r *Runner) Add(key Key) { r.queue.Add(key) }

// AddAfter enqueues key after d.
func (r *Runner) AddAfter(key Key, d time.Duration) { r.queue.AddAfter(key, d) }

// Run works until ctx is done.
func (r *Runner) Run(ctx context.Context) {
	defer r.queue.ShutDown()
	ctx = klog.NewContext(ctx, klog.LoggerWithValues(klog.FromContext(ctx), "controller", r.Name))
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
		logger := klog.LoggerWithValues(klog.FromContext(ctx), "cluster", key.Cluster, "namespace", key.Namespace, "name", key.Name)
		if key.Resource != "" {
			logger = logger.WithValues("resource", key.Resource)
		}
		requeue, err := r.Reconcile(klog.NewContext(ctx, logger), key)
		switch {
		case apierrors.IsConflict(err):
			// Somebody wrote first (or the reconcile read an informer not
			// yet holding its own last write); the next round reads their
			// version. The newer version's event wakes the key anyway; the
			// short retry is not rate limited, so conflicts never queue
			// behind the error backoff's bucket (10/s for the whole queue).
			logger.V(4).Info("Reconcile conflict")
			r.queue.Forget(key)
			r.queue.AddAfter(key, conflictRetry)
		case err != nil:
			logger.Error(err, "Reconcile failed")
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
