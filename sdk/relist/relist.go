// Package relist makes an informer learn of the objects deleted while its
// watch was down.
//
// After a broken or expired watch, the reflector relists and the informer
// turns what the listing no longer holds into DeletedFinalStateUnknown
// deletes. kcp's third_party informer keys its store with
// MetaClusterNamespaceKeyFunc, which cannot key such a tombstone: the delete
// fails, the object stays in the store and no handler gets OnDelete.
// ListWatch closes that gap: when the watch that follows a complete listing
// starts, it first sends a Deleted event for every object of the store the
// listing no longer holds. Those go through the informer like any watch
// event, so the store drops them and every handler gets one OnDelete (with
// the last known object, never a tombstone).
package relist

import (
	"context"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
)

// ListWatch wraps a ListerWatcher; see the package documentation.
type ListWatch struct {
	lw  cache.ListerWatcherWithContext
	key cache.KeyFunc
	// Wire, if set, turns a stored object into the type the watch sends,
	// for an informer whose transform changes it.
	Wire func(obj runtime.Object) (runtime.Object, error)

	mu    sync.Mutex
	store cache.KeyListerGetter
	// paging are the keys of the paged listing under way; listed those
	// of the last complete listing, until a watch takes them.
	paging, listed map[string]bool
}

// New wraps lw. key must be the key function of the informer's store.
// Call SetStore with the informer's indexer before running it.
func New(lw cache.ListerWatcher, key cache.KeyFunc) *ListWatch {
	return &ListWatch{lw: cache.ToListerWatcherWithContext(lw), key: key}
}

// SetStore sets the store whose stale objects get deleted.
func (l *ListWatch) SetStore(store cache.KeyListerGetter) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.store = store
}

// List implements cache.Lister.
func (l *ListWatch) List(opts metav1.ListOptions) (runtime.Object, error) {
	return l.ListWithContext(context.Background(), opts)
}

// Watch implements cache.Watcher.
func (l *ListWatch) Watch(opts metav1.ListOptions) (watch.Interface, error) {
	return l.WatchWithContext(context.Background(), opts)
}

// ListWithContext lists and remembers the keys of a complete listing (the
// last page of a paged one).
func (l *ListWatch) ListWithContext(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	list, err := l.lw.ListWithContext(ctx, opts)
	if err != nil {
		return list, err
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return list, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if opts.Continue == "" || l.paging == nil {
		l.paging = map[string]bool{}
	}
	for _, it := range items {
		if k, err := l.key(it); err == nil {
			l.paging[k] = true
		}
	}
	if m, err := meta.ListAccessor(list); err == nil && m.GetContinue() == "" {
		l.listed, l.paging = l.paging, nil
	}
	return list, nil
}

// WatchWithContext watches. After a complete listing it first deletes what
// the listing no longer holds; a watch that lists first (sendInitialEvents)
// does so after its initial events.
func (l *ListWatch) WatchWithContext(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	in, err := l.lw.WatchWithContext(ctx, opts)
	if err != nil {
		return in, err
	}
	l.mu.Lock()
	listed := l.listed
	l.listed = nil
	l.mu.Unlock()
	initial := opts.SendInitialEvents != nil && *opts.SendInitialEvents
	if !initial && listed == nil {
		return in, nil
	}
	w := &watcher{l: l, in: in, out: make(chan watch.Event), stop: make(chan struct{})}
	go w.run(listed, initial, opts.ResourceVersion)
	return w, nil
}

// keep gives back the keys of a listing whose deletes a stopped watch did
// not finish, for the next watch, unless a new listing came meanwhile.
func (l *ListWatch) keep(listed map[string]bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.listed == nil && l.paging == nil {
		l.listed = listed
	}
}

// watcher passes a watch's events on, with the deletes the listing implies.
type watcher struct {
	l    *ListWatch
	in   watch.Interface
	out  chan watch.Event
	stop chan struct{}
	once sync.Once
}

func (w *watcher) ResultChan() <-chan watch.Event { return w.out }

func (w *watcher) Stop() {
	w.once.Do(func() {
		close(w.stop)
		w.in.Stop()
	})
}

func (w *watcher) send(e watch.Event) bool {
	select {
	case w.out <- e:
		return true
	case <-w.stop:
		return false
	}
}

func (w *watcher) run(listed map[string]bool, initial bool, rv string) {
	defer close(w.out)
	if initial {
		listed = map[string]bool{}
	} else if !w.deletes(listed, rv) {
		w.l.keep(listed)
		return
	}
	for e := range w.in.ResultChan() {
		if initial {
			switch m, err := meta.Accessor(e.Object); {
			case err != nil:
			case e.Type == watch.Added:
				if k, err := w.l.key(e.Object); err == nil {
					listed[k] = true
				}
			case e.Type == watch.Bookmark && m.GetAnnotations()[metav1.InitialEventsAnnotationKey] == "true":
				// The reflector replaces its store with the initial
				// events on this bookmark; the deletes follow it.
				if !w.send(e) {
					return
				}
				if !w.deletes(listed, m.GetResourceVersion()) {
					w.l.keep(listed)
					return
				}
				initial = false
				continue
			}
		}
		if !w.send(e) {
			return
		}
	}
}

// deletes sends a Deleted event for every object of the store that listed
// does not hold, at resourceVersion rv (the listing's: the reflector goes
// on from the version of the last event).
func (w *watcher) deletes(listed map[string]bool, rv string) bool {
	w.l.mu.Lock()
	store := w.l.store
	w.l.mu.Unlock()
	if store == nil {
		return true
	}
	for _, k := range store.ListKeys() {
		if listed[k] {
			continue
		}
		obj, ok, err := store.GetByKey(k)
		if err != nil || !ok {
			continue
		}
		o, ok := obj.(runtime.Object)
		if !ok {
			continue
		}
		if w.l.Wire == nil {
			o = o.DeepCopyObject()
		} else if o, err = w.l.Wire(o); err != nil {
			continue
		}
		if m, err := meta.Accessor(o); err == nil && rv != "" {
			m.SetResourceVersion(rv)
		}
		if !w.send(watch.Event{Type: watch.Deleted, Object: o}) {
			return false
		}
	}
	return true
}
