package kcpbench

import (
	"context"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
)

// Handler is called for every object a watch sees, with the time the
// event (or list) was received. deleted is true for DELETED events.
type Handler func(u *unstructured.Unstructured, deleted bool, at time.Time)

// watchTimeoutSeconds bounds each watch request on the server side; the
// loop then resumes from the last resource version.
const watchTimeoutSeconds = 300

// WatchObjects lists ri and then watches it from the list's resource
// version until ctx ends, calling h for every listed object and every
// event. When a watch ends or fails it resumes from the last seen resource
// version, and relists if that is too old. synced (may be nil) is called
// once after the first successful list. List errors are retried with a
// short backoff (a workspace may not be reachable right after it became
// Ready).
func WatchObjects(ctx context.Context, ri dynamic.ResourceInterface, h Handler, synced func()) {
	backoff := 50 * time.Millisecond
	sleep := func() bool {
		select {
		case <-ctx.Done():
			return false
		case <-time.After(backoff):
			backoff = min(2*backoff, time.Second)
			return true
		}
	}
	rv := ""
	for ctx.Err() == nil {
		if rv == "" {
			list, err := ri.List(ctx, metav1.ListOptions{})
			if err != nil {
				if !sleep() {
					return
				}
				continue
			}
			at := time.Now()
			for i := range list.Items {
				h(&list.Items[i], false, at)
			}
			rv = list.GetResourceVersion()
			if synced != nil {
				synced()
				synced = nil
			}
		}
		w, err := ri.Watch(ctx, metav1.ListOptions{ResourceVersion: rv, AllowWatchBookmarks: true, TimeoutSeconds: ptr(int64(watchTimeoutSeconds))})
		if err != nil {
			if apierrors.IsResourceExpired(err) || apierrors.IsGone(err) {
				rv = ""
			}
			if !sleep() {
				return
			}
			continue
		}
		rv = drain(ctx, w, h, rv)
		backoff = 50 * time.Millisecond
	}
}

// drain consumes w until it ends and returns the resource version to
// resume from ("" to relist).
func drain(ctx context.Context, w watch.Interface, h Handler, rv string) string {
	defer w.Stop()
	for {
		select {
		case <-ctx.Done():
			return rv
		case ev, ok := <-w.ResultChan():
			if !ok {
				return rv
			}
			at := time.Now()
			switch ev.Type {
			case watch.Error:
				return "" // typically 410 Gone: relist
			case watch.Bookmark, watch.Added, watch.Modified, watch.Deleted:
				u, ok := ev.Object.(*unstructured.Unstructured)
				if !ok {
					continue
				}
				if v := u.GetResourceVersion(); v != "" {
					rv = v
				}
				if ev.Type != watch.Bookmark {
					h(u, ev.Type == watch.Deleted, at)
				}
			}
		}
	}
}

func ptr[T any](v T) *T { return &v }

// watchSet runs named watches, each at most once.
type watchSet struct {
	base context.Context
	mu   sync.Mutex
	m    map[string]*watchHandle
	wg   sync.WaitGroup
}

type watchHandle struct {
	cancel context.CancelFunc
	synced chan struct{}
}

func newWatchSet(base context.Context) *watchSet {
	return &watchSet{base: base, m: map[string]*watchHandle{}}
}

// ensure starts the watch key (run with a context derived from the set's
// base context and a function to call once it has listed) unless it runs
// already, then waits until it has listed or ctx ends.
func (s *watchSet) ensure(ctx context.Context, key string, run func(ctx context.Context, synced func())) error {
	s.mu.Lock()
	wh := s.m[key]
	if wh == nil {
		wctx, cancel := context.WithCancel(s.base)
		wh = &watchHandle{cancel: cancel, synced: make(chan struct{})}
		s.m[key] = wh
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			var once sync.Once
			run(wctx, func() { once.Do(func() { close(wh.synced) }) })
		}()
	}
	s.mu.Unlock()
	select {
	case <-wh.synced:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// stop ends the watch key, if running.
func (s *watchSet) stop(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if wh := s.m[key]; wh != nil {
		wh.cancel()
		delete(s.m, key)
	}
}

// len is the number of running watches.
func (s *watchSet) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.m)
}

// stopAll ends all watches and waits for them to return.
func (s *watchSet) stopAll() {
	s.mu.Lock()
	for k, wh := range s.m {
		wh.cancel()
		delete(s.m, k)
	}
	s.mu.Unlock()
	s.wg.Wait()
}
