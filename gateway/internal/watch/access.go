package watch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/klog/v2"

	"github.com/meshplane/meshplane/gateway/internal/kube"
)

// The core authorizes a watch when it starts and never again, so a
// subscription would outlive its subscriber's access. The hub therefore
// re-checks the access of every open watch, with the subscriber's own
// token: one SelfSubjectAccessReview (verb watch) per distinct token,
// workspace, resource, namespace and name, whatever the number of
// subscriptions behind it, each AccessInterval, with at most
// AccessWorkers checks in flight. A denial ends every subscription of that
// key with a Revoked error.

// DefaultAccessInterval is how often open watches' access is re-checked.
const DefaultAccessInterval = 3 * time.Second

// accessWorkers bounds the checks in flight at once: with many distinct
// keys a round takes longer than the interval instead of loading the core.
const accessWorkers = 4

// Revoked ends a subscription whose subscriber lost access to what it
// watches.
type Revoked struct {
	// Reason is the Status reason of the core's refusal (Forbidden,
	// Unauthorized, NotFound).
	Reason  string
	Message string
}

func (e *Revoked) Error() string { return e.Message }

// Extensions are the GraphQL error's extensions.
func (e *Revoked) Extensions() map[string]any {
	return map[string]any{"code": "ACCESS_REVOKED", "reason": e.Reason, "status": http.StatusForbidden}
}

// accessKey is what one check decides.
type accessKey struct {
	tokenHash string
	kube.Resource
}

// accessEntry is a key's check and the streams that depend on it.
type accessEntry struct {
	token     string
	path      string // the collection, for the fallback list
	streams   map[*stream]bool
	checkedAt time.Time
}

// accessKeyOf is the check of a stream (false for the admin's watches and
// paths that name no single resource of one cluster).
func accessKeyOf(s *stream) (accessKey, bool) {
	if s.token == "" {
		return accessKey{}, false
	}
	res, ok := kube.ParseResourcePath(s.key.Path)
	if !ok || res.Name != "" {
		return accessKey{}, false
	}
	// The core authorizes a watch whose field selector fixes
	// metadata.name as a request for that name (resourceNames rules apply).
	if sel, err := fields.ParseSelector(s.key.FieldSelector); err == nil {
		res.Name, _ = sel.RequiresExactMatch("metadata.name")
	}
	return accessKey{tokenHash: s.key.tokenHash, Resource: res}, true
}

// track registers a new stream's check (under h.mu).
func (h *Hub) track(s *stream) {
	k, ok := accessKeyOf(s)
	if !ok {
		return
	}
	e := h.access[k]
	if e == nil {
		e = &accessEntry{token: s.token, path: s.key.Path, streams: map[*stream]bool{}, checkedAt: time.Now()}
		h.access[k] = e
	}
	e.streams[s] = true
	s.access = k
	s.checked = true
}

// untrack drops an ended stream (under h.mu).
func (h *Hub) untrack(s *stream) {
	if !s.checked {
		return
	}
	if e := h.access[s.access]; e != nil {
		delete(e.streams, s)
		if len(e.streams) == 0 {
			delete(h.access, s.access)
		}
	}
}

// AccessChecks reports the distinct checks open subscriptions need.
func (h *Hub) AccessChecks() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.access)
}

// RunAccessChecks re-checks the access of open watches every interval
// until ctx ends.
func (h *Hub) RunAccessChecks(ctx context.Context, interval time.Duration) {
	if interval <= 0 {
		return
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		h.checkRound(ctx, interval)
	}
}

// checkRound checks every key not checked within the last interval.
func (h *Hub) checkRound(ctx context.Context, interval time.Duration) {
	type job struct {
		key   accessKey
		token string
		path  string
	}
	now := time.Now()
	var jobs []job
	h.mu.Lock()
	for k, e := range h.access {
		// A key whose first stream started less than an interval ago was
		// authorized by the core just then.
		if now.Sub(e.checkedAt) >= interval/2 {
			jobs = append(jobs, job{k, e.token, e.path})
		}
	}
	h.mu.Unlock()
	work := make(chan job)
	var wg sync.WaitGroup
	for range min(accessWorkers, len(jobs)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range work {
				err := h.checkAccess(ctx, j.token, j.key, j.path)
				var rev *Revoked
				if errors.As(err, &rev) {
					h.revoke(j.key, rev)
					continue
				}
				if err != nil {
					// Not a decision (the core unreachable, ...): the
					// watch's own reconnection is authorized again.
					klog.V(2).InfoS("re-checking a subscription's access failed; keeping it", "workspace", j.key.Workspace, "resource", j.key.Resource.Resource, "err", err)
				}
				h.mu.Lock()
				if e := h.access[j.key]; e != nil {
					e.checkedAt = time.Now()
				}
				h.mu.Unlock()
			}
		}()
	}
	for _, j := range jobs {
		select {
		case work <- j:
		case <-ctx.Done():
		}
	}
	close(work)
	wg.Wait()
}

// checkAccess asks the core whether token may still watch what key names:
// nil when allowed, a *Revoked when not, another error when the core gave
// no answer.
func (h *Hub) checkAccess(ctx context.Context, token string, key accessKey, path string) error {
	r := key.Resource
	ssar := authorizationv1.SelfSubjectAccessReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "authorization.k8s.io/v1", Kind: "SelfSubjectAccessReview"},
		Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authorizationv1.ResourceAttributes{
			Verb: "watch", Group: r.Group, Version: r.Version, Resource: r.Resource, Namespace: r.Namespace, Name: r.Name}},
	}
	body, _ := json.Marshal(ssar)
	out, err := h.kube.Do(ctx, token, kube.Request{Method: "POST", ContentType: "application/json", Body: body,
		Path: kube.ClusterPath(r.Workspace) + "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"})
	var ke *kube.Error
	if errors.As(err, &ke) && ke.Code == http.StatusForbidden {
		// The token may not ask (no access to the workspace any more, or
		// the workspace took system:basic-user away): the watch's own
		// list permission decides.
		return h.checkList(ctx, token, key, path)
	}
	if err != nil {
		return revokedBy(key, err)
	}
	if err := json.Unmarshal(out, &ssar); err != nil {
		return fmt.Errorf("decoding the SelfSubjectAccessReview: %w", err)
	}
	if !ssar.Status.Allowed {
		why := "the core no longer allows watching it"
		if ssar.Status.Reason != "" {
			why += ": " + ssar.Status.Reason
		}
		return &Revoked{Reason: string(metav1.StatusReasonForbidden), Message: revokedMessage(key, why)}
	}
	return nil
}

// checkList lists one object of the watched collection with the
// subscriber's token.
func (h *Hub) checkList(ctx context.Context, token string, key accessKey, path string) error {
	q := url.Values{"limit": {"1"}, "resourceVersion": {"0"}}
	if key.Name != "" {
		q.Set("fieldSelector", fields.OneTermEqualSelector("metadata.name", key.Name).String())
	}
	_, err := h.kube.Do(ctx, token, kube.Request{Method: "GET", Path: path, Query: q})
	return revokedBy(key, err)
}

// revokedBy turns the core's 401, 403 or 404 into a *Revoked.
func revokedBy(key accessKey, err error) error {
	var ke *kube.Error
	if !errors.As(err, &ke) {
		return err
	}
	switch ke.Code {
	case http.StatusUnauthorized:
		return &Revoked{Reason: ke.Reason, Message: revokedMessage(key, "the core no longer accepts the token")}
	case http.StatusForbidden:
		return &Revoked{Reason: ke.Reason, Message: revokedMessage(key, ke.Message)}
	case http.StatusNotFound:
		return &Revoked{Reason: ke.Reason, Message: revokedMessage(key, "workspace "+key.Workspace+" is gone")}
	}
	return err
}

func revokedMessage(key accessKey, why string) string {
	what := key.Resource.Resource
	if key.Group != "" {
		what += "." + key.Group
	}
	if key.Name != "" {
		what += " " + key.Name
	}
	if key.Namespace != "" {
		what += " in namespace " + key.Namespace
	}
	return fmt.Sprintf("access revoked: the subscription to %s of workspace %s ended: %s", what, key.Workspace, why)
}

// revoke ends every stream of key: the subscribers get err as their last
// event, and the events still queued for them are dropped.
func (h *Hub) revoke(key accessKey, err *Revoked) {
	h.mu.Lock()
	defer h.mu.Unlock()
	e := h.access[key]
	if e == nil {
		return
	}
	delete(h.access, key)
	for s := range e.streams {
		s.checked = false
		for ch := range s.subs {
			endWith(ch, Event{Err: err})
			delete(s.subs, ch)
		}
		s.cancel()
		if h.shared[s.key] == s {
			delete(h.shared, s.key)
		}
	}
}

// endWith drops what is queued on ch, sends ev and closes ch. Only the hub
// sends on ch, under h.mu, so the send finds room.
func endWith(ch chan Event, ev Event) {
	for len(ch) > 0 {
		select {
		case <-ch:
		default:
		}
	}
	ch <- ev
	close(ch)
}
