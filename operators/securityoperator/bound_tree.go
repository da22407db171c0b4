package securityoperator

import (
	"context"
	"errors"
	"sort"
	"strings"
	"sync"

	"github.com/meshplane/meshplane/apis/fga"
)

// boundTree answers an organization's bound resources: those of its own
// workspace and of every account workspace below it (nested accounts
// too), each read through the cache. Which workspaces to read comes from
// the watch of APIBindings and CRDs: only workspaces holding one of them
// can serve a resource beyond the built-in ones, so an organization with
// hundreds of accounts costs a discovery per account that binds anything,
// once per change (or cache ttl). A workspace belongs to the organization
// its own path is below (the path of the logical cluster the binding lives
// in, as the core names it), never to what an object says.
type boundTree struct {
	cache *boundCache
	// pathOf maps a logical cluster to its workspace path.
	pathOf func(cluster string) (string, bool)

	mu sync.Mutex
	// sources are the APIBindings and CRDs of each logical cluster.
	sources map[string]map[string]struct{}
}

func newBoundTree(cache *boundCache, pathOf func(string) (string, bool)) *boundTree {
	return &boundTree{cache: cache, pathOf: pathOf, sources: map[string]map[string]struct{}{}}
}

// observe records an APIBinding's or CRD's presence in its logical cluster
// (object names the kind and name) and tells the cache.
func (t *boundTree) observe(cluster, object string, present bool) {
	if cluster == "" {
		return
	}
	t.mu.Lock()
	objs := t.sources[cluster]
	if present {
		if objs == nil {
			objs = map[string]struct{}{}
			t.sources[cluster] = objs
		}
		objs[object] = struct{}{}
	} else if objs != nil {
		delete(objs, object)
		if len(objs) == 0 {
			delete(t.sources, cluster)
		}
	}
	t.mu.Unlock()
	t.cache.changed(cluster)
}

// accounts returns the logical clusters below the organization's path that
// hold an APIBinding or CRD.
func (t *boundTree) accounts(org string) []string {
	prefix := org + ":"
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []string
	for cl := range t.sources {
		if p, ok := t.pathOf(cl); ok && strings.HasPrefix(p, prefix) {
			out = append(out, cl)
		}
	}
	sort.Strings(out)
	return out
}

// resources returns the resources bound in the organization's workspace
// (a logical cluster or a path) and in its accounts. An account that
// cannot be read makes the answer an error (the Store controller keeps the
// previous model then, rather than drop types).
func (t *boundTree) resources(ctx context.Context, workspace string) ([]fga.Resource, error) {
	own, err := t.cache.resources(ctx, workspace)
	if err != nil {
		return own, err
	}
	org := workspace
	if !strings.Contains(workspace, ":") {
		p, ok := t.pathOf(workspace)
		if !ok {
			return own, nil
		}
		org = p
	}
	accounts := t.accounts(org)
	if len(accounts) == 0 {
		return own, nil
	}
	seen := map[string]bool{}
	out := make([]fga.Resource, 0, len(own))
	add := func(rs []fga.Resource) {
		for _, r := range rs {
			if k := r.ModuleName(); !seen[k] {
				seen[k] = true
				out = append(out, r)
			}
		}
	}
	add(own)
	var errs []error
	for _, cl := range accounts {
		rs, err := t.cache.resources(ctx, cl)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		add(rs)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ModuleName() < out[j].ModuleName() })
	return out, errors.Join(errs...)
}
