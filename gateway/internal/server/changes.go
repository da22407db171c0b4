package server

import (
	"context"
	"time"

	"k8s.io/klog/v2"

	"github.com/meshplane/meshplane/gateway/internal/watch"
)

// changeSources are the wildcard collections whose events mean that a
// logical cluster's APIs may have changed.
var changeSources = []string{
	"/clusters/*/apis/apis.kcp.io/v1alpha2/apibindings",
	"/clusters/*/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
}

// watchChanges watches APIBindings and CRDs of every logical cluster (as
// the admin, one watch each through the hub) and has the registry
// re-check the workspaces of a cluster an event names. An APIExport whose
// schema changes under existing bindings is covered too: the export then
// names a new APIResourceSchema (they are immutable), and the binding
// controller writes the new schema's name and UID into each binding's
// status.boundResources, an event here. When a watch had to start over
// (its resourceVersion expired), events may have been missed, so every
// workspace in use is re-checked. Polling every refresh interval stays as
// the last fallback.
//
// hub reaches one core: the one core of an install without a front proxy,
// or one shard of a sharded install (run once per shard, until ctx ends).
func (s *Server) watchChanges(ctx context.Context, hub *watch.Hub, shard string) {
	for _, path := range changeSources {
		go func(path string) {
			backoff := time.Second
			for restarted := false; ctx.Err() == nil; restarted = true {
				events, stop, err := hub.SubscribeWithTimeout(ctx, "", path, "", "", "", 5*time.Second)
				if err != nil {
					klog.V(2).InfoS("cannot watch for API changes; polling only", "shard", shard, "path", path, "err", err)
					select {
					case <-ctx.Done():
						return
					case <-time.After(backoff):
					}
					if backoff < time.Minute {
						backoff *= 2
					}
					continue
				}
				backoff = time.Second
				// The subscription ends with ctx (a shard no longer listed).
				done := make(chan struct{})
				go func() {
					select {
					case <-ctx.Done():
						stop()
					case <-done:
					}
				}()
				if restarted {
					go s.Registry.refreshAll(ctx)
				}
				for ev := range events {
					if ev.Err != nil {
						break
					}
					md, _ := ev.Object["metadata"].(map[string]any)
					ann, _ := md["annotations"].(map[string]any)
					if cluster, _ := ann["kcp.io/cluster"].(string); cluster != "" {
						s.Registry.Changed(ctx, cluster)
					}
				}
				close(done)
				stop()
			}
		}(path)
	}
}
