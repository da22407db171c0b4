package cacheserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// maxObjectBytes bounds a written object (etcd's own limit is 1.5 MiB).
const maxObjectBytes = 1 << 20

// Handler serves the cache server's API on etcd.
type Handler struct {
	// Client is the etcd connection (KV and Watcher).
	Client *clientv3.Client
	// Prefix is the etcd key prefix of the cache ("/meshplane-cache/").
	Prefix string
	// Resources are the kinds held; others are 404.
	Resources []Resource
}

func (h *Handler) resource(gvr schema.GroupVersionResource) (Resource, bool) {
	for _, r := range h.Resources {
		if r.GroupVersionResource == gvr {
			return r, true
		}
	}
	return Resource{}, false
}

// keyPrefix is the etcd prefix of a resource, of one shard's objects of
// it when shard is not the wildcard.
func (h *Handler) keyPrefix(gvr schema.GroupVersionResource, shard string) string {
	p := h.Prefix + gvr.Group + "/" + gvr.Resource + "/"
	if shard != wildcard {
		p += shard + "/"
	}
	return p
}

func (h *Handler) key(r request) string {
	return h.keyPrefix(r.gvr, r.shard) + r.cluster + "/" + r.name
}

// ServeHTTP serves a request the caller has authorized (WithAuthorization).
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	req, err := parse(r.URL.Path)
	if err != nil {
		status(w, http.StatusNotFound, "NotFound", err.Error())
		return
	}
	res, ok := h.resource(req.gvr)
	if !ok {
		status(w, http.StatusNotFound, "NotFound", fmt.Sprintf("the cache server holds no %s", req.gvr))
		return
	}
	switch {
	case r.Method == http.MethodGet && req.name == "":
		if v := r.URL.Query().Get("watch"); v == "true" || v == "1" {
			h.watch(w, r, req, res)
			return
		}
		h.list(w, r, req, res)
	case r.Method == http.MethodGet:
		h.get(w, r, req)
	case r.Method == http.MethodPut && req.name != "":
		h.put(w, r, req, res)
	case r.Method == http.MethodDelete && req.name != "":
		h.delete(w, r, req)
	default:
		status(w, http.StatusMethodNotAllowed, "MethodNotAllowed", r.Method+" is not served on "+r.URL.Path)
	}
}

// concrete reports whether a request names one shard and one cluster.
func (req request) concrete() bool { return req.shard != wildcard && req.cluster != wildcard }

func (h *Handler) get(w http.ResponseWriter, r *http.Request, req request) {
	if !req.concrete() {
		status(w, http.StatusBadRequest, "BadRequest", "a read names one shard and one cluster")
		return
	}
	resp, err := h.Client.Get(r.Context(), h.key(req))
	if err != nil {
		status(w, http.StatusServiceUnavailable, "ServiceUnavailable", err.Error())
		return
	}
	if len(resp.Kvs) == 0 {
		status(w, http.StatusNotFound, "NotFound", fmt.Sprintf("%s %q not found", req.gvr.Resource, req.name))
		return
	}
	obj, err := decode(resp.Kvs[0].Value, resp.Kvs[0].ModRevision)
	if err != nil {
		status(w, http.StatusInternalServerError, "InternalError", err.Error())
		return
	}
	writeJSON(w, http.StatusOK, obj)
}

func (h *Handler) list(w http.ResponseWriter, r *http.Request, req request, res Resource) {
	items, rev, err := h.current(r.Context(), req)
	if err != nil {
		status(w, http.StatusServiceUnavailable, "ServiceUnavailable", err.Error())
		return
	}
	if items == nil {
		items = []map[string]any{}
	}
	if strings.Contains(r.Header.Get("Accept"), "as=PartialObjectMetadataList") {
		// Metadata only, as kube serves it: what a writer's resync reads.
		for i, it := range items {
			items[i] = map[string]any{"apiVersion": "meta.k8s.io/v1", "kind": "PartialObjectMetadata", "metadata": it["metadata"]}
		}
		writeJSON(w, http.StatusOK, map[string]any{
			"apiVersion": "meta.k8s.io/v1", "kind": "PartialObjectMetadataList",
			"metadata": map[string]any{"resourceVersion": strconv.FormatInt(rev, 10)}, "items": items,
		})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"apiVersion": res.GroupVersion().String(), "kind": res.Kind + "List",
		"metadata": map[string]any{"resourceVersion": strconv.FormatInt(rev, 10)}, "items": items,
	})
}

// current lists the objects a request selects, and the etcd revision of
// the listing.
func (h *Handler) current(ctx context.Context, req request) ([]map[string]any, int64, error) {
	resp, err := h.Client.Get(ctx, h.keyPrefix(req.gvr, req.shard), clientv3.WithPrefix())
	if err != nil {
		return nil, 0, err
	}
	var items []map[string]any
	for _, kv := range resp.Kvs {
		if !h.selects(req, string(kv.Key)) {
			continue
		}
		obj, err := decode(kv.Value, kv.ModRevision)
		if err != nil {
			return nil, 0, err
		}
		items = append(items, obj)
	}
	return items, resp.Header.Revision, nil
}

// selects reports whether a key is in the request's cluster (every key
// under the request's prefix is in its shard).
func (h *Handler) selects(req request, key string) bool {
	if req.cluster == wildcard {
		return true
	}
	rest := strings.TrimPrefix(key, h.keyPrefix(req.gvr, wildcard))
	// <shard>/<cluster>/<name>
	parts := strings.SplitN(rest, "/", 3)
	return len(parts) == 3 && parts[1] == req.cluster
}

func (h *Handler) put(w http.ResponseWriter, r *http.Request, req request, res Resource) {
	if !req.concrete() {
		status(w, http.StatusBadRequest, "BadRequest", "a write names one shard and one cluster")
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxObjectBytes+1))
	if err != nil {
		status(w, http.StatusBadRequest, "BadRequest", err.Error())
		return
	}
	if len(body) > maxObjectBytes {
		status(w, http.StatusRequestEntityTooLarge, "RequestEntityTooLarge", "the object is larger than 1 MiB")
		return
	}
	var obj map[string]any
	if err := json.Unmarshal(body, &obj); err != nil {
		status(w, http.StatusBadRequest, "BadRequest", "the body is not a JSON object: "+err.Error())
		return
	}
	if err := check(obj, req, res); err != nil {
		status(w, http.StatusBadRequest, "BadRequest", err.Error())
		return
	}
	meta := obj["metadata"].(map[string]any)
	delete(meta, "resourceVersion")
	delete(meta, "managedFields")
	ann, _ := meta["annotations"].(map[string]any)
	if ann == nil {
		ann = map[string]any{}
	}
	ann[ShardAnnotation] = req.shard
	ann[ClusterAnnotation] = req.cluster
	meta["annotations"] = ann
	value, err := json.Marshal(obj)
	if err != nil {
		status(w, http.StatusInternalServerError, "InternalError", err.Error())
		return
	}
	resp, err := h.Client.Put(r.Context(), h.key(req), string(value))
	if err != nil {
		status(w, http.StatusServiceUnavailable, "ServiceUnavailable", err.Error())
		return
	}
	meta["resourceVersion"] = strconv.FormatInt(resp.Header.Revision, 10)
	writeJSON(w, http.StatusOK, obj)
}

// check refuses an object that is not the one the path names.
func check(obj map[string]any, req request, res Resource) error {
	if obj["apiVersion"] != res.GroupVersion().String() || obj["kind"] != res.Kind {
		return fmt.Errorf("want apiVersion %s and kind %s", res.GroupVersion(), res.Kind)
	}
	meta, ok := obj["metadata"].(map[string]any)
	if !ok {
		return errors.New("metadata is not an object")
	}
	if meta["name"] != req.name {
		return fmt.Errorf("metadata.name must be %q, the name in the path", req.name)
	}
	if ns, ok := meta["namespace"]; ok && ns != "" {
		return errors.New("the cache server holds cluster-scoped objects only")
	}
	if a, ok := meta["annotations"]; ok && a != nil {
		if _, ok := a.(map[string]any); !ok {
			return errors.New("metadata.annotations is not an object")
		}
	}
	return nil
}

func (h *Handler) delete(w http.ResponseWriter, r *http.Request, req request) {
	if !req.concrete() {
		status(w, http.StatusBadRequest, "BadRequest", "a delete names one shard and one cluster")
		return
	}
	resp, err := h.Client.Delete(r.Context(), h.key(req))
	if err != nil {
		status(w, http.StatusServiceUnavailable, "ServiceUnavailable", err.Error())
		return
	}
	if resp.Deleted == 0 {
		status(w, http.StatusNotFound, "NotFound", fmt.Sprintf("%s %q not found", req.gvr.Resource, req.name))
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"kind": "Status", "apiVersion": "v1", "metadata": map[string]any{}, "status": "Success"})
}

// decode reads a stored object and sets its resourceVersion.
func decode(value []byte, rev int64) (map[string]any, error) {
	var obj map[string]any
	if err := json.Unmarshal(value, &obj); err != nil {
		return nil, err
	}
	meta, _ := obj["metadata"].(map[string]any)
	if meta == nil {
		return nil, errors.New("stored object without metadata")
	}
	meta["resourceVersion"] = strconv.FormatInt(rev, 10)
	return obj, nil
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}
