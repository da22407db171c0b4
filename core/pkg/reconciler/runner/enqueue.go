package runner

import (
	"k8s.io/client-go/tools/cache"
)

// Source is what EnqueueFrom follows: a shared informer, or an index
// that forwards its informer's events.
type Source interface {
	AddEventHandler(cache.ResourceEventHandler) (cache.ResourceEventHandlerRegistration, error)
}

// KeysFunc maps an added, updated or deleted object (tombstones already
// unwrapped) to the keys to reconcile; nil for none.
type KeysFunc func(obj any) []Key

// EnqueueFrom adds, for every event of src, the keys keys returns: the
// one place where informer events become queue keys. A deleted object is
// enqueued like any other; its reconcile finds it gone.
func (r *Runner) EnqueueFrom(src Source, keys KeysFunc) error {
	_, err := src.AddEventHandler(Handler(keys, r.Add))
	return err
}

// Handler is the event handler EnqueueFrom registers, for sources that
// are not a Source.
func Handler(keys KeysFunc, add func(Key)) cache.ResourceEventHandlerFuncs {
	enqueue := func(obj any) {
		for _, k := range keys(Unwrap(obj)) {
			add(k)
		}
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    enqueue,
		UpdateFunc: func(_, obj any) { enqueue(obj) },
		DeleteFunc: enqueue,
	}
}

// EnqueueUpdatesFrom is EnqueueFrom for updates only: for a source whose
// additions and deletions concern no key.
func (r *Runner) EnqueueUpdatesFrom(src Source, keys KeysFunc) error {
	h := Handler(keys, r.Add)
	_, err := src.AddEventHandler(cache.ResourceEventHandlerFuncs{UpdateFunc: h.UpdateFunc})
	return err
}
