// Package cacheserver is the install's cache server, as kcp's: the place
// shards write copies of the objects the other shards need of them
// (exports, schemas, endpoint slices, workspace types, logical clusters,
// admission configuration and the RBAC of export workspaces) and watch
// them from, one watch per kind whatever the number of shards.
//
// It serves a subset of the Kubernetes API under PathPrefix, with kcp's
// layout:
//
//	/services/cache/shards/<shard|*>/clusters/<cluster|*>/apis/<group>/<version>/<resource>[/<name>]
//
// GET lists (watch=true watches) and reads; PUT writes an object (create
// or replace), DELETE removes it. Objects are stored in etcd under their
// own key prefix, keyed by resource, shard, cluster and name; the server
// sets their kcp.io/shard and kcp.io/cluster annotations from the path,
// and their resourceVersion is the etcd revision that wrote them. No
// admission, no controllers: the shards decide what is there.
package cacheserver

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// PathPrefix is where the cache server is served (kcp's path).
const PathPrefix = "/services/cache"

// The annotations the cache server sets on every object it stores.
const (
	ShardAnnotation   = "kcp.io/shard"
	ClusterAnnotation = "kcp.io/cluster"
	// SourceVersionAnnotation is the resourceVersion the object had on its
	// shard when it was written: the writer skips unchanged objects.
	SourceVersionAnnotation = "cache.meshplane.io/source-resource-version"
)

// MetadataListAccept asks a list for metadata only (kube's
// PartialObjectMetadataList).
const MetadataListAccept = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"

// Resource is a kind the cache server holds.
type Resource struct {
	schema.GroupVersionResource
	Kind string
}

// request is a parsed cache server path.
type request struct {
	shard, cluster string
	gvr            schema.GroupVersionResource
	name           string
}

// wildcard means every shard or every cluster in a path.
const wildcard = "*"

// parse reads a path below PathPrefix.
func parse(path string) (request, error) {
	rest, ok := strings.CutPrefix(path, PathPrefix+"/")
	if !ok {
		return request{}, fmt.Errorf("not a cache server path")
	}
	seg := strings.Split(strings.TrimSuffix(rest, "/"), "/")
	// shards/<s>/clusters/<c>/apis/<g>/<v>/<r>[/<name>]
	if len(seg) < 8 || len(seg) > 9 || seg[0] != "shards" || seg[2] != "clusters" || seg[4] != "apis" {
		return request{}, fmt.Errorf("want %s/shards/<shard>/clusters/<cluster>/apis/<group>/<version>/<resource>[/<name>]", PathPrefix)
	}
	r := request{shard: seg[1], cluster: seg[3], gvr: schema.GroupVersionResource{Group: seg[5], Version: seg[6], Resource: seg[7]}}
	if len(seg) == 9 {
		r.name = seg[8]
	}
	for _, s := range []string{r.shard, r.cluster, r.gvr.Group, r.gvr.Version, r.gvr.Resource} {
		if s == "" || s == "." || s == ".." {
			return request{}, fmt.Errorf("empty or relative path segment")
		}
	}
	if r.name == "." || r.name == ".." || r.name == wildcard {
		return request{}, fmt.Errorf("invalid name %q", r.name)
	}
	return r, nil
}

// status writes a Kubernetes Status.
func status(w http.ResponseWriter, code int, reason, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]any{
		"kind": "Status", "apiVersion": "v1", "metadata": map[string]any{},
		"status": "Failure", "message": msg, "reason": reason, "code": code,
	})
}
