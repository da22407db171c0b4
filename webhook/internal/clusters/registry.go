// Package clusters knows the account workspaces: for each logical cluster,
// the account it belongs to, its organization and the organization's
// OpenFGA store, learnt from the AccountInfo in each workspace that binds
// core.platform-mesh.io.
package clusters

import (
	"strings"
	"sync"
	"time"
)

// Info is what the webhook knows of one account workspace.
type Info struct {
	// Cluster is the workspace's logical cluster.
	Cluster string
	// Path is its workspace path (root:orgs:acme:team).
	Path string
	// Org is the organization's name (the first segment below root:orgs).
	Org string
	// Account is the Account's name; OriginCluster the logical cluster
	// holding the Account object.
	Account, OriginCluster string
	// StoreID is the organization's OpenFGA store.
	StoreID string
}

// Registry maps logical clusters to Info. It is safe for concurrent use;
// readers never wait on a slow update.
type Registry struct {
	mu        sync.RWMutex
	clusters  map[string]Info
	byPath    map[string]string // workspace path -> cluster
	firstSeen map[string]time.Time
	synced    bool
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{clusters: map[string]Info{}, byPath: map[string]string{}, firstSeen: map[string]time.Time{}}
}

// Set records (or replaces) a cluster's info: a recreated organization's
// new store id replaces the old one.
func (r *Registry) Set(info Info) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if old, ok := r.clusters[info.Cluster]; ok && r.byPath[old.Path] == info.Cluster {
		delete(r.byPath, old.Path)
	}
	r.clusters[info.Cluster] = info
	r.byPath[info.Path] = info.Cluster
	if _, ok := r.firstSeen[info.Cluster]; !ok {
		r.firstSeen[info.Cluster] = time.Now()
	}
}

// Delete forgets a cluster.
func (r *Registry) Delete(cluster string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if old, ok := r.clusters[cluster]; ok && r.byPath[old.Path] == cluster {
		delete(r.byPath, old.Path)
	}
	delete(r.clusters, cluster)
	delete(r.firstSeen, cluster)
}

// Get returns a cluster's info and when it was first seen.
func (r *Registry) Get(cluster string) (Info, time.Time, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	info, ok := r.clusters[cluster]
	return info, r.firstSeen[cluster], ok
}

// ByPath returns the info of the workspace at path.
func (r *Registry) ByPath(path string) (Info, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	cluster, ok := r.byPath[path]
	if !ok {
		return Info{}, false
	}
	info, ok := r.clusters[cluster]
	return info, ok
}

// Len is the number of known clusters.
func (r *Registry) Len() int {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return len(r.clusters)
}

// MarkSynced records that the clusters existing at start have been read.
func (r *Registry) MarkSynced() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.synced = true
}

// Synced reports whether MarkSynced was called.
func (r *Registry) Synced() bool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.synced
}

// OrgsPrefix is the path prefix of organizations' workspaces.
const OrgsPrefix = "root:orgs:"

// OrgOf returns the organization of a workspace path below root:orgs.
func OrgOf(path string) (string, bool) {
	rest, ok := strings.CutPrefix(path, OrgsPrefix)
	if !ok || rest == "" {
		return "", false
	}
	org, _, _ := strings.Cut(rest, ":")
	return org, true
}
