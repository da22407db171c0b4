// Package index tells the front proxy which shard serves a workspace. It
// is fed by watches: the Shards of the root shard, and on every shard its
// LogicalClusters (kcp.io/path and kcp.io/cluster annotations) and its
// mounted Workspaces (served by the shard of their parent, which proxies
// them to the mount's URL once Ready).
package index

import (
	"strings"
	"sync"
)

// Shard is where requests for a shard's workspaces go.
type Shard struct {
	Name string
	// BaseURL is the shard's own address (spec.baseURL).
	BaseURL string
}

type cluster struct {
	shard string
	path  string
}

// Index maps workspace paths and logical cluster names to shards.
type Index struct {
	mu     sync.RWMutex
	shards map[string]Shard
	// clusters by logical cluster name; paths: path -> cluster name.
	clusters map[string]cluster
	paths    map[string]string
	// mounted Workspaces: parent cluster name + ":" + workspace name.
	mounted map[string]bool
}

// New returns an empty index.
func New() *Index {
	return &Index{shards: map[string]Shard{}, clusters: map[string]cluster{}, paths: map[string]string{}, mounted: map[string]bool{}}
}

// Lookup returns the shard serving a workspace path or logical cluster
// name. A mounted workspace is served by its parent's shard.
func (i *Index) Lookup(pathOrName string) (Shard, bool) {
	i.mu.RLock()
	defer i.mu.RUnlock()
	if name, ok := i.resolve(pathOrName); ok {
		return i.shardOf(i.clusters[name].shard)
	}
	parentPath, last, ok := cutLast(pathOrName)
	if !ok {
		return Shard{}, false
	}
	parent, ok := i.resolve(parentPath)
	if !ok || !i.mounted[parent+":"+last] {
		return Shard{}, false
	}
	return i.shardOf(i.clusters[parent].shard)
}

// Shard returns a shard by name.
func (i *Index) Shard(name string) (Shard, bool) {
	i.mu.RLock()
	defer i.mu.RUnlock()
	return i.shardOf(name)
}

func (i *Index) shardOf(name string) (Shard, bool) {
	s, ok := i.shards[name]
	return s, ok
}

func (i *Index) resolve(pathOrName string) (string, bool) {
	if name, ok := i.paths[pathOrName]; ok {
		return name, true
	}
	if _, ok := i.clusters[pathOrName]; ok {
		return pathOrName, true
	}
	return "", false
}

func cutLast(path string) (string, string, bool) {
	at := strings.LastIndexByte(path, ':')
	if at <= 0 || at == len(path)-1 {
		return "", "", false
	}
	return path[:at], path[at+1:], true
}

// SetShard records a shard; deleted drops it (its clusters stay indexed
// until its watches end, but no longer route).
func (i *Index) SetShard(s Shard, deleted bool) {
	i.mu.Lock()
	defer i.mu.Unlock()
	if deleted {
		delete(i.shards, s.Name)
		return
	}
	i.shards[s.Name] = s
}

// SetCluster records (or, when deleted, forgets) the logical cluster name
// with its path on shard.
func (i *Index) SetCluster(shard, name, path string, deleted bool) {
	i.mu.Lock()
	defer i.mu.Unlock()
	if old, ok := i.clusters[name]; ok {
		if old.shard != shard && deleted {
			return // an older copy on another shard went; the new one stays
		}
		if old.path != "" && i.paths[old.path] == name {
			delete(i.paths, old.path)
		}
	}
	if deleted {
		delete(i.clusters, name)
		return
	}
	i.clusters[name] = cluster{shard: shard, path: path}
	if path != "" {
		i.paths[path] = name
	}
}

// SetMounted records (or forgets) that Workspace name in parent is a
// mount.
func (i *Index) SetMounted(parent, name string, mounted bool) {
	i.mu.Lock()
	defer i.mu.Unlock()
	if mounted {
		i.mounted[parent+":"+name] = true
	} else {
		delete(i.mounted, parent+":"+name)
	}
}

// DropShardClusters forgets every cluster of a shard (its watches ended).
func (i *Index) DropShardClusters(shard string) {
	i.mu.Lock()
	defer i.mu.Unlock()
	for name, c := range i.clusters {
		if c.shard == shard {
			delete(i.clusters, name)
			if i.paths[c.path] == name {
				delete(i.paths, c.path)
			}
		}
	}
}
