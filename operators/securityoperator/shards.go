package securityoperator

import (
	"context"
	"slices"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/meshplane/meshplane/operators/lifecycle"
)

// refreshShards is how often the WorkspaceType's virtual workspace URLs
// are read again, for a shard added while the operator runs: a GET of one
// object a second; an organization placed on a new shard waits at most
// that long for its initializer (5 s before: 4.7 s to Ready on a shard
// added live against 2.4 s on the others).
const (
	refreshShards = time.Second
	readTimeout   = 5 * time.Second
)

// lifecycleWatchers makes the watchers of one lifecycle kind for urls.
type lifecycleWatchers func(kind lifecycle.Kind, urls []string) []*lifecycle.Watcher

// followNewShards reads the type's initializing and terminating URLs every
// refreshShards and starts watchers for those not followed yet (a shard
// added to the install), adding them to followed, until ctx ends.
func followNewShards(ctx context.Context, log logr.Logger, types client.Client, typeName string, followed *atomic.Pointer[[]*lifecycle.Watcher], newWatchers lifecycleWatchers) {
	t := time.NewTicker(refreshShards)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		current := *followed.Load()
		var added []*lifecycle.Watcher
		for _, kind := range []lifecycle.Kind{lifecycle.Initializing, lifecycle.Terminating} {
			readCtx, cancel := context.WithTimeout(ctx, readTimeout)
			urls, err := lifecycle.URLsOf(readCtx, types, typeName, kind)
			cancel()
			if err != nil {
				continue
			}
			var fresh []string
			for _, url := range urls {
				if !slices.ContainsFunc(current, func(w *lifecycle.Watcher) bool { return w.Kind == kind && w.URL == url }) {
					fresh = append(fresh, url)
				}
			}
			if len(fresh) > 0 {
				log.Info("following the virtual workspaces of a new shard", "kind", kind, "urls", fresh)
				added = append(added, newWatchers(kind, fresh)...)
			}
		}
		if len(added) == 0 {
			continue
		}
		all := append(slices.Clone(current), added...)
		followed.Store(&all)
		for _, w := range added {
			go func() { _ = w.Run(ctx) }()
		}
	}
}
