package server

import (
	"context"
	"encoding/json"
	"sort"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql/handler"
	"golang.org/x/sync/singleflight"
	"k8s.io/klog/v2"

	"github.com/meshplane/meshplane/gateway/internal/exec"
	"github.com/meshplane/meshplane/gateway/internal/kube"
	"github.com/meshplane/meshplane/gateway/internal/schema"
	"github.com/meshplane/meshplane/gateway/internal/watch"
)

// built is one schema with its gqlgen server, shared by every workspace
// whose API set has the same hash.
type built struct {
	exe       *exec.Executable
	srv       *handler.Server
	buildTime time.Duration
}

type wsState struct {
	hash        string
	cluster     string // the logical cluster, for change events
	lastUsed    time.Time
	lastChecked time.Time
}

// maxChecksPerTick bounds the fallback re-checks of one refresh tick, so
// that many workspaces in use do not mean a flood of OpenAPI reads: with
// the default 10s interval at most 20 per second. The least recently
// checked go first; events from the change watches are not bounded.
const maxChecksPerTick = 200

// Registry maps workspaces to schemas: one schema per distinct API set.
type Registry struct {
	kube    *kube.Client
	hub     *watch.Hub
	newSrv  func(*exec.Executable) *handler.Server
	refresh time.Duration
	idle    time.Duration

	mu     sync.Mutex
	byHash map[string]*built
	ws     map[string]*wsState
	group  singleflight.Group
}

// NewRegistry returns an empty registry.
func NewRegistry(c *kube.Client, hub *watch.Hub, newSrv func(*exec.Executable) *handler.Server, refresh, idle time.Duration) *Registry {
	return &Registry{kube: c, hub: hub, newSrv: newSrv, refresh: refresh, idle: idle, byHash: map[string]*built{}, ws: map[string]*wsState{}}
}

// Stats reports how many workspaces and distinct schemas are held.
func (r *Registry) Stats() (workspaces, schemas int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.ws), len(r.byHash)
}

// Get returns the schema of ws, generating it the first time (so a Ready
// workspace answers at once, with no window of 404s).
func (r *Registry) Get(ctx context.Context, ws string) (*built, error) {
	r.mu.Lock()
	if st, ok := r.ws[ws]; ok {
		st.lastUsed = time.Now()
		b := r.byHash[st.hash]
		r.mu.Unlock()
		if b != nil {
			return b, nil
		}
	} else {
		r.mu.Unlock()
	}
	v, err, _ := r.group.Do("ws/"+ws, func() (any, error) { return r.load(ctx, ws) })
	if err != nil {
		return nil, err
	}
	return v.(*built), nil
}

// load reads the API set of ws and finds or generates its schema.
func (r *Registry) load(ctx context.Context, ws string) (*built, error) {
	set, err := r.kube.FetchAPISet(ctx, ws)
	if err != nil {
		return nil, err
	}
	b, err := r.forSet(ctx, ws, set)
	if err != nil {
		return nil, err
	}
	cluster := r.clusterOf(ctx, ws)
	r.mu.Lock()
	r.ws[ws] = &wsState{hash: set.Hash, cluster: cluster, lastUsed: time.Now(), lastChecked: time.Now()}
	r.mu.Unlock()
	return b, nil
}

// clusterOf reads the logical cluster name of a workspace path from its
// LogicalCluster object ("" when it cannot be read).
func (r *Registry) clusterOf(ctx context.Context, ws string) string {
	b, err := r.kube.Do(ctx, "", kube.Request{Method: "GET", Path: kube.ClusterPath(ws) + "/apis/core.kcp.io/v1alpha1/logicalclusters/cluster"})
	if err != nil {
		return ""
	}
	var lc struct {
		Metadata struct {
			Annotations map[string]string `json:"annotations"`
		} `json:"metadata"`
	}
	if json.Unmarshal(b, &lc) != nil {
		return ""
	}
	return lc.Metadata.Annotations["kcp.io/cluster"]
}

// Changed tells the registry that the APIs of a logical cluster may have
// changed (an APIBinding or a CRD event). Its workspaces are re-checked at
// once and a few times in the next seconds, as serving follows the event.
func (r *Registry) Changed(ctx context.Context, cluster string) {
	r.mu.Lock()
	var names []string
	for name, st := range r.ws {
		if st.cluster == cluster || name == cluster {
			names = append(names, name)
		}
	}
	r.mu.Unlock()
	if len(names) == 0 {
		return
	}
	go func() {
		for _, d := range []time.Duration{0, 300 * time.Millisecond, time.Second, 2 * time.Second, 5 * time.Second} {
			select {
			case <-ctx.Done():
				return
			case <-time.After(d):
			}
			for _, name := range names {
				r.check(ctx, name)
			}
		}
	}()
}

func (r *Registry) forSet(ctx context.Context, ws string, set *kube.APISet) (*built, error) {
	r.mu.Lock()
	b := r.byHash[set.Hash]
	r.mu.Unlock()
	if b != nil {
		return b, nil
	}
	v, err, _ := r.group.Do("hash/"+set.Hash, func() (any, error) {
		start := time.Now()
		in, err := r.kube.FetchInput(ctx, ws, set)
		if err != nil {
			return nil, err
		}
		m, err := schema.Build(in)
		if err != nil {
			return nil, err
		}
		exe := &exec.Executable{Model: m, Hash: set.Hash, Kube: r.kube, Hub: r.hub}
		b := &built{exe: exe, srv: r.newSrv(exe), buildTime: time.Since(start)}
		r.mu.Lock()
		r.byHash[set.Hash] = b
		r.mu.Unlock()
		klog.InfoS("generated a schema", "workspace", ws, "hash", set.Hash, "types", len(m.Schema.Types), "resources", len(m.Resources), "took", b.buildTime)
		return b, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*built), nil
}

// Run re-reads the API set of every workspace in use each refresh
// interval and swaps its schema when the set changed (an APIBinding or a
// CRD came or went). Open subscriptions keep their executor, so they go
// on working. Workspaces unused for the idle time are forgotten, and
// schemas no workspace uses any more are dropped.
func (r *Registry) Run(ctx context.Context) {
	t := time.NewTicker(r.refresh)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		r.refreshAll(ctx)
	}
}

func (r *Registry) refreshAll(ctx context.Context) {
	r.mu.Lock()
	var names []string
	now := time.Now()
	for name, st := range r.ws {
		if now.Sub(st.lastUsed) > r.idle {
			delete(r.ws, name)
			continue
		}
		names = append(names, name)
	}
	if len(names) > maxChecksPerTick {
		sort.Slice(names, func(i, j int) bool { return r.ws[names[i]].lastChecked.Before(r.ws[names[j]].lastChecked) })
		names = names[:maxChecksPerTick]
	}
	r.mu.Unlock()
	sem := make(chan struct{}, 16)
	var wg sync.WaitGroup
	for _, name := range names {
		wg.Add(1)
		sem <- struct{}{}
		go func(name string) {
			defer wg.Done()
			defer func() { <-sem }()
			r.check(ctx, name)
		}(name)
	}
	wg.Wait()
	r.gc()
}

// check re-reads the API set of one workspace and swaps its schema when
// the set changed.
func (r *Registry) check(ctx context.Context, name string) {
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	set, err := r.kube.FetchAPISet(cctx, name)
	if err != nil {
		// Through a front proxy an unknown workspace is a 403, even to
		// the admin; the next request reads it again.
		if kube.IsNotFound(err) || kube.IsForbidden(err) {
			r.mu.Lock()
			delete(r.ws, name)
			r.mu.Unlock()
		}
		return
	}
	r.mu.Lock()
	st := r.ws[name]
	same := st != nil && st.hash == set.Hash
	if st != nil {
		st.lastChecked = time.Now()
	}
	r.mu.Unlock()
	if same || st == nil {
		return
	}
	if _, err := r.forSet(cctx, name, set); err != nil {
		klog.ErrorS(err, "regenerating a schema", "workspace", name)
		return
	}
	r.mu.Lock()
	if st := r.ws[name]; st != nil && st.hash != set.Hash {
		klog.InfoS("the API set changed", "workspace", name, "from", st.hash, "to", set.Hash)
		st.hash = set.Hash
	}
	r.mu.Unlock()
}

// gc drops schemas that no workspace uses.
func (r *Registry) gc() {
	r.mu.Lock()
	defer r.mu.Unlock()
	used := map[string]bool{}
	for _, st := range r.ws {
		used[st.hash] = true
	}
	for h := range r.byHash {
		if !used[h] {
			delete(r.byHash, h)
		}
	}
}
