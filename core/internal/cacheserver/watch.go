package cacheserver

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// initialEventsEnd marks the bookmark that ends a watch's initial events
// (kube's annotation).
const initialEventsEnd = "k8s.io/initial-events-end"

// maxWatch bounds a watch that asks no timeout (kube's clients always ask
// one).
const maxWatch = 30 * time.Minute

// event is a watch event on the wire.
type event struct {
	Type   string         `json:"type"`
	Object map[string]any `json:"object"`
}

// watch streams a request's changes, as kube's watch does: JSON events,
// one a line, from the resourceVersion asked (the current objects first
// when it is empty or 0, or with sendInitialEvents=true), bookmarks when
// allowed, and an ERROR 410 Expired when the revision was compacted.
func (h *Handler) watch(w http.ResponseWriter, r *http.Request, req request, res Resource) {
	q := r.URL.Query()
	timeout := maxWatch
	if s := q.Get("timeoutSeconds"); s != "" {
		if n, err := strconv.Atoi(s); err == nil && n > 0 && time.Duration(n)*time.Second < maxWatch {
			timeout = time.Duration(n) * time.Second
		}
	}
	ctx, cancel := context.WithTimeout(r.Context(), timeout)
	defer cancel()
	bookmarks := q.Get("allowWatchBookmarks") == "true"
	initial := q.Get("sendInitialEvents") == "true"
	rv := q.Get("resourceVersion")
	var from int64
	var first []map[string]any
	if initial || rv == "" || rv == "0" {
		items, rev, err := h.current(ctx, req)
		if err != nil {
			status(w, http.StatusServiceUnavailable, "ServiceUnavailable", err.Error())
			return
		}
		first, from = items, rev
	} else {
		n, err := strconv.ParseInt(rv, 10, 64)
		if err != nil || n < 0 {
			status(w, http.StatusBadRequest, "BadRequest", "resourceVersion is not a revision: "+rv)
			return
		}
		from = n
	}
	ch := h.Client.Watch(clientv3.WithRequireLeader(ctx), h.keyPrefix(req.gvr, req.shard), clientv3.WithPrefix(),
		clientv3.WithRev(from+1), clientv3.WithPrevKV(), clientv3.WithProgressNotify())

	flusher, _ := w.(http.Flusher)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Transfer-Encoding", "chunked")
	w.WriteHeader(http.StatusOK)
	enc := json.NewEncoder(w)
	send := func(e event) bool {
		if err := enc.Encode(e); err != nil {
			return false
		}
		if flusher != nil {
			flusher.Flush()
		}
		return true
	}
	bookmark := func(rev int64, ann map[string]any) event {
		meta := map[string]any{"resourceVersion": strconv.FormatInt(rev, 10)}
		if ann != nil {
			meta["annotations"] = ann
		}
		return event{Type: "BOOKMARK", Object: map[string]any{"apiVersion": res.GroupVersion().String(), "kind": res.Kind, "metadata": meta}}
	}
	for _, obj := range first {
		if !send(event{Type: "ADDED", Object: obj}) {
			return
		}
	}
	if initial && bookmarks && !send(bookmark(from, map[string]any{initialEventsEnd: "true"})) {
		return
	}
	if flusher != nil {
		flusher.Flush()
	}
	for resp := range ch {
		if resp.CompactRevision != 0 {
			send(event{Type: "ERROR", Object: map[string]any{"kind": "Status", "apiVersion": "v1", "metadata": map[string]any{},
				"status": "Failure", "reason": "Expired", "code": http.StatusGone,
				"message": "too old resource version: " + strconv.FormatInt(from, 10) + " (" + strconv.FormatInt(resp.CompactRevision, 10) + ")"}})
			return
		}
		if err := resp.Err(); err != nil {
			return
		}
		if resp.IsProgressNotify() {
			if bookmarks && !send(bookmark(resp.Header.Revision, nil)) {
				return
			}
			continue
		}
		for _, ev := range resp.Events {
			e, ok := h.toEvent(req, res, ev)
			if ok && !send(e) {
				return
			}
		}
	}
}

// toEvent is the watch event of an etcd event the request selects.
func (h *Handler) toEvent(req request, res Resource, ev *clientv3.Event) (event, bool) {
	key := string(ev.Kv.Key)
	if !h.selects(req, key) {
		return event{}, false
	}
	if ev.Type == mvccpb.PUT {
		obj, err := decode(ev.Kv.Value, ev.Kv.ModRevision)
		if err != nil {
			return event{}, false
		}
		if ev.IsCreate() {
			return event{Type: "ADDED", Object: obj}, true
		}
		return event{Type: "MODIFIED", Object: obj}, true
	}
	if ev.PrevKv != nil {
		if obj, err := decode(ev.PrevKv.Value, ev.Kv.ModRevision); err == nil {
			return event{Type: "DELETED", Object: obj}, true
		}
	}
	// Without the previous value (compacted): the object's identity from
	// its key, which is all a reader needs to drop it.
	parts := strings.SplitN(strings.TrimPrefix(key, h.keyPrefix(req.gvr, wildcard)), "/", 3)
	if len(parts) != 3 {
		return event{}, false
	}
	return event{Type: "DELETED", Object: map[string]any{"apiVersion": res.GroupVersion().String(), "kind": res.Kind,
		"metadata": map[string]any{"name": parts[2], "resourceVersion": strconv.FormatInt(ev.Kv.ModRevision, 10),
			"annotations": map[string]any{ShardAnnotation: parts[0], ClusterAnnotation: parts[1]}}}}, true
}
