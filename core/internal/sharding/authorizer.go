package sharding

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/util/cache"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/meshplane/meshplane/core/internal/clusters"
)

// How long the answer of another shard is kept (kube's webhook authorizer
// keeps its answers too): an allow longer than a refusal, so a grant
// shows within DeniedTTL and a revocation within AllowedTTL, under the
// second issue 26 asks for (a replica of the RBAC these checks read would
// make them local: docs/sharding.md, replication that scales).
const (
	AllowedTTL = 600 * time.Millisecond
	DeniedTTL  = 300 * time.Millisecond
	// answersKept bounds the cache of answers (least recently used go).
	answersKept = 4096
)

// Authorizer decides a request in a logical cluster of another shard
// with a SubjectAccessReview there, when Local does not allow it. In this
// shard's clusters, Local decides alone. Virtual workspaces and the bind
// check ask it about the export's or type's cluster, which may be
// anywhere. Answers are cached (AllowedTTL, DeniedTTL), per shard.
type Authorizer struct {
	Local   authorizer.Authorizer
	Shards  *Shards
	IsLocal func(cluster string) bool
	// Deep asks a deep review (authorization.DeepReviewHeader): the other
	// shard answers with the cluster's RBAC only, as the bind check does
	// locally. Otherwise its whole authorizer chain answers.
	Deep bool
}

// answer is a cached review's result.
type answer struct {
	decision authorizer.Decision
	reason   string
}

// Authorize implements authorizer.Authorizer.
func (a Authorizer) Authorize(ctx context.Context, attrs authorizer.Attributes) (authorizer.Decision, string, error) {
	d, reason, err := a.Local.Authorize(ctx, attrs)
	cluster, _ := clusters.From(ctx)
	if d == authorizer.DecisionAllow || a.Shards == nil || cluster == "" || cluster == clusters.Wildcard || a.IsLocal(cluster) {
		return d, reason, err
	}
	if a.Deep && a.Shards.ReplicaRBAC != nil && a.Shards.Others().HasRBAC(cluster) {
		// The cluster's RBAC is replicated: decided here, as its shard
		// would, and a revocation counts once the cache's watch brings it.
		return a.Shards.ReplicaRBAC.Authorize(ctx, attrs)
	}
	c, ok, herr := a.Shards.Holding(ctx, cluster)
	if herr != nil {
		return authorizer.DecisionNoOpinion, "", herr
	}
	if !ok {
		return d, reason, err
	}
	sar := review(attrs)
	key, kerr := reviewKey(cluster, a.Deep, sar.Spec)
	answers := a.Shards.answers()
	if kerr == nil {
		if ans, ok := answers.get(key); ok {
			return ans.decision, ans.reason, nil
		}
	}
	reviews := c.Reviews
	if a.Deep {
		reviews = c.DeepReviews
	}
	out, err := reviews.Submit(ctx, cluster, sar)
	if err != nil {
		return authorizer.DecisionNoOpinion, "", fmt.Errorf("asking the shard of %s: %w", cluster, err)
	}
	ans := answer{decision: authorizer.DecisionNoOpinion, reason: out.Status.Reason}
	switch {
	case out.Status.Allowed:
		ans.decision = authorizer.DecisionAllow
	case out.Status.Denied:
		ans.decision = authorizer.DecisionDeny
	}
	if kerr == nil && out.Status.EvaluationError == "" {
		answers.put(key, ans)
	}
	return ans.decision, ans.reason, nil
}

// reviewKey identifies a review: the cluster, deep or not, and the spec
// (user, groups, extra, attributes).
func reviewKey(cluster string, deep bool, spec authorizationv1.SubjectAccessReviewSpec) (string, error) {
	b, err := json.Marshal(struct {
		Cluster string
		Deep    bool
		Spec    authorizationv1.SubjectAccessReviewSpec
	}{cluster, deep, spec})
	return string(b), err
}

// answerCache keeps other shards' answers: allows AllowedTTL, the rest
// DeniedTTL.
type answerCache struct{ lru *cache.LRUExpireCache }

func newAnswerCache(clock cache.Clock) answerCache {
	return answerCache{lru: cache.NewLRUExpireCacheWithClock(answersKept, clock)}
}

func (c answerCache) get(key string) (answer, bool) {
	v, ok := c.lru.Get(key)
	if !ok {
		return answer{}, false
	}
	return v.(answer), true
}

func (c answerCache) put(key string, ans answer) {
	ttl := DeniedTTL
	if ans.decision == authorizer.DecisionAllow {
		ttl = AllowedTTL
	}
	c.lru.Add(key, ans, ttl)
}

// review is the SubjectAccessReview asking about attrs.
func review(attrs authorizer.Attributes) *authorizationv1.SubjectAccessReview {
	u := attrs.GetUser()
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{User: u.GetName(), Groups: u.GetGroups(), UID: u.GetUID()}}
	if len(u.GetExtra()) > 0 {
		sar.Spec.Extra = map[string]authorizationv1.ExtraValue{}
		for k, v := range u.GetExtra() {
			sar.Spec.Extra[k] = v
		}
	}
	if attrs.IsResourceRequest() {
		sar.Spec.ResourceAttributes = &authorizationv1.ResourceAttributes{Namespace: attrs.GetNamespace(), Verb: attrs.GetVerb(), Group: attrs.GetAPIGroup(),
			Version: attrs.GetAPIVersion(), Resource: attrs.GetResource(), Subresource: attrs.GetSubresource(), Name: attrs.GetName()}
	} else {
		sar.Spec.NonResourceAttributes = &authorizationv1.NonResourceAttributes{Path: attrs.GetPath(), Verb: attrs.GetVerb()}
	}
	return sar
}

// wallClock is the time of day for answerCache.
type wallClock struct{}

func (wallClock) Now() time.Time { return time.Now() }
