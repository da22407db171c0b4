package frame

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"sync"

	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/multicluster-runtime/pkg/multicluster"
)

// Engaged records the workspaces the manager engages (those that bind the
// export) until they are disengaged (their binding is gone). It is a
// multicluster-aware runnable; as an http.Handler it answers the sorted
// logical-cluster names as a JSON list.
type Engaged struct {
	log      logr.Logger
	mu       sync.Mutex
	clusters map[string]int // engagements per name (re-engaging overlaps the old one's end)
}

// NewEngaged returns an empty record.
func NewEngaged(log logr.Logger) *Engaged {
	return &Engaged{log: log, clusters: map[string]int{}}
}

// Engage records name until ctx ends.
func (e *Engaged) Engage(ctx context.Context, name multicluster.ClusterName, _ cluster.Cluster) error {
	n := string(name)
	e.mu.Lock()
	e.clusters[n]++
	e.mu.Unlock()
	e.log.Info("engaged workspace", "cluster", n)
	go func() {
		<-ctx.Done()
		e.mu.Lock()
		if e.clusters[n]--; e.clusters[n] <= 0 {
			delete(e.clusters, n)
		}
		e.mu.Unlock()
		e.log.Info("disengaged workspace", "cluster", n)
	}()
	return nil
}

// Start blocks until ctx ends.
func (e *Engaged) Start(ctx context.Context) error {
	<-ctx.Done()
	return nil
}

// List returns the engaged logical clusters, sorted.
func (e *Engaged) List() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]string, 0, len(e.clusters))
	for n := range e.clusters {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// ServeHTTP answers List as JSON.
func (e *Engaged) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(e.List())
}
