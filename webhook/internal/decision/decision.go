// Package decision answers a SubjectAccessReview: it finds the account
// workspace of the review's cluster, maps the review to an OpenFGA Check
// (package mapping) and asks OpenFGA, through a short-lived cache pinned
// to the store's current model. Answers are Allowed or NoOpinion, never
// Denied: RBAC and other authorizers keep their say.
package decision

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/util/cache"

	"github.com/meshplane/meshplane/webhook/internal/clusters"
	"github.com/meshplane/meshplane/webhook/internal/fgacheck"
	"github.com/meshplane/meshplane/webhook/internal/invites"
	"github.com/meshplane/meshplane/webhook/internal/mapping"
	"github.com/meshplane/meshplane/webhook/internal/metrics"
	"github.com/meshplane/meshplane/webhook/internal/orgs"
	"github.com/meshplane/meshplane/webhook/internal/resources"
	"github.com/meshplane/meshplane/webhook/internal/review"

	"github.com/meshplane/meshplane/apis/fga"
)

// OpenFGA is what the decider asks of OpenFGA.
type OpenFGA interface {
	Check(ctx context.Context, store, model string, q mapping.Query, fresh bool) (bool, error)
	LatestModel(ctx context.Context, store string) (string, error)
}

// Decider answers reviews.
type Decider struct {
	Clusters  *clusters.Registry
	Resources *resources.Resolver
	FGA       OpenFGA
	Metrics   *metrics.Metrics
	// Orgs reads root:orgs for the organizations' own reads there (nil:
	// none are answered).
	Orgs *orgs.Reader
	// Invites accepts invitations by e-mail when the invitee's reviews
	// come in (nil: none are).
	Invites *invites.Acceptor
	// CacheTTL is how long a Check's answer is reused (0: no cache).
	CacheTTL time.Duration
	// NewClusterGrace is how long a workspace whose store is not known
	// yet is answered with "retry" (503) rather than "no opinion".
	NewClusterGrace time.Duration
	// RetryAfter is the delay suggested with a 503.
	RetryAfter time.Duration

	models *Models
	cache  *cache.LRUExpireCache
	grants *grantChanges
}

// Init prepares the caches; modelRefresh is how often a store's current
// model is read again.
func (d *Decider) Init(modelRefresh time.Duration) {
	d.models = NewModels(d.FGA, modelRefresh, d.Metrics)
	d.cache = cache.NewLRUExpireCache(65536)
	d.grants = newGrantChanges()
}

// GrantsChanged tells the decider that the grants of organization org
// changed (a RoleAssignment or its Store was written): its cached answers
// are dropped, and for a while its Checks go past OpenFGA's caches.
func (d *Decider) GrantsChanged(org string) {
	if org != "" {
		d.grants.changed(org)
	}
}

// Result is the answer to a review.
type Result struct {
	Status authorizationv1.SubjectAccessReviewStatus
	// RetryAfter is set when the webhook cannot answer yet (HTTP 503).
	RetryAfter time.Duration
	// Cache tells whether the decision came from the cache: hit, miss or
	// none (no Check was needed).
	Cache string
}

func noOpinion(format string, args ...any) Result {
	return Result{Status: authorizationv1.SubjectAccessReviewStatus{Reason: fmt.Sprintf(format, args...)}, Cache: "none"}
}

// Decide answers one review.
func (d *Decider) Decide(ctx context.Context, r review.Review) Result {
	cluster := r.Cluster()
	if cluster == "" {
		return noOpinion("the review names no logical cluster")
	}
	if r.Spec.User == "" {
		return noOpinion("the review names no user")
	}
	info, firstSeen, known := d.Clusters.Get(cluster)
	switch {
	case !known && !d.Clusters.Synced():
		return Result{RetryAfter: d.RetryAfter, Cache: "none",
			Status: authorizationv1.SubjectAccessReviewStatus{Reason: "the account workspaces are being read"}}
	case !known:
		if name, rel, ok := orgs.Request(r.Spec.ResourceAttributes); ok && d.Orgs != nil {
			return d.decideOrg(ctx, cluster, r.Spec.User, r.Spec.Groups, r.Spec.Extra, name, rel)
		}
		return noOpinion("logical cluster %s is no account workspace", cluster)
	case info.StoreID == "" && time.Since(firstSeen) < d.NewClusterGrace:
		return Result{RetryAfter: d.RetryAfter, Cache: "none",
			Status: authorizationv1.SubjectAccessReviewStatus{Reason: fmt.Sprintf("the store of workspace %s is not known yet", info.Path)}}
	case info.StoreID == "":
		return noOpinion("workspace %s has no OpenFGA store", info.Path)
	}
	// A sign-in with a verified e-mail address an Invite here names: while
	// its grant is being made, what it would refuse is asked again.
	if d.Invites.Observe(cluster, r.Spec.User, r.Spec.Extra) {
		if res := d.decideAccount(ctx, r, cluster, info); res.Status.Allowed || res.RetryAfter > 0 {
			return res
		}
		return Result{RetryAfter: d.RetryAfter, Cache: "none",
			Status: authorizationv1.SubjectAccessReviewStatus{Reason: "accepting an invitation of " + r.Spec.User}}
	}
	return d.decideAccount(ctx, r, cluster, info)
}

// decideAccount answers a review about an account workspace.
func (d *Decider) decideAccount(ctx context.Context, r review.Review, cluster string, info clusters.Info) Result {
	ws := mapping.Workspace{Cluster: cluster, Account: fga.AccountObject(info.OriginCluster, info.Account)}
	var q mapping.Query
	var err error
	if ra := r.Spec.ResourceAttributes; ra != nil {
		if q, ok := mapping.ForSelfReview(ws, r.Spec.User, ra); ok {
			return d.check(ctx, info, q, r.Spec.Groups)
		}
		if q, ok := mapping.ForLogicalCluster(ws, r.Spec.User, ra); ok {
			return d.check(ctx, info, q, r.Spec.Groups)
		}
		if q, ok := mapping.ForRoleAssignment(ws, r.Spec.User, ra); ok {
			return d.check(ctx, info, q, r.Spec.Groups)
		}
		if !mapping.IsResourceVerb(ra.Verb) {
			return noOpinion("verb %q is not in the model", ra.Verb)
		}
		res, lerr := d.Resources.Lookup(ctx, cluster, ra.Group, ra.Version, ra.Resource)
		if lerr != nil {
			return noOpinion("resource %s.%s: %v", ra.Resource, ra.Group, lerr)
		}
		q, err = mapping.ForResource(ws, r.Spec.User, ra, res)
	} else if nra := r.Spec.NonResourceAttributes; nra != nil {
		q, err = mapping.ForNonResource(ws, r.Spec.User, nra)
	} else {
		return noOpinion("the review has neither resource nor non-resource attributes")
	}
	if err != nil {
		return noOpinion("%v", err)
	}
	return d.check(ctx, info, q, r.Spec.Groups)
}

// check asks OpenFGA about q with the user's groups; a model without
// groups (an organization whose model is not updated yet) is asked
// without them.
func (d *Decider) check(ctx context.Context, info clusters.Info, q mapping.Query, groups []string) Result {
	if len(groups) > 0 {
		res := d.checkOnce(ctx, info, mapping.WithGroups(q, groups))
		if !res.invalid {
			return res.Result
		}
	}
	return d.checkOnce(ctx, info, q).Result
}

type checked struct {
	Result
	// invalid: OpenFGA refused the Check as not in the model.
	invalid bool
}

func (d *Decider) checkOnce(ctx context.Context, info clusters.Info, q mapping.Query) checked {
	model, err := d.models.Current(ctx, info.StoreID)
	if err != nil {
		return d.failed(info, q, err)
	}
	gen, fresh := d.grants.state(info.Org)
	key := info.StoreID + "|" + info.Org + "|" + model + "|" + strconv.FormatUint(gen, 10) + "|" + q.Key()
	if d.CacheTTL > 0 {
		if v, ok := d.cache.Get(key); ok {
			d.Metrics.Cache.WithLabelValues("hit").Inc()
			return checked{Result: result(v.(bool), q, "hit")}
		}
		d.Metrics.Cache.WithLabelValues("miss").Inc()
	}
	start := time.Now()
	allowed, err := d.FGA.Check(ctx, info.StoreID, model, q, fresh)
	d.Metrics.OpenFGASeconds.WithLabelValues("check").Observe(time.Since(start).Seconds())
	if err != nil {
		return d.failed(info, q, err)
	}
	if d.CacheTTL > 0 {
		d.cache.Add(key, allowed, d.CacheTTL)
	}
	return checked{Result: result(allowed, q, "miss")}
}

func (d *Decider) failed(info clusters.Info, q mapping.Query, err error) checked {
	if errors.Is(err, fgacheck.ErrInvalid) {
		// Not in this store's model (or the store is gone): no opinion.
		return checked{Result: noOpinion("%s %s %s: not in the model of store %s", q.User, q.Relation, q.Object, info.StoreID), invalid: true}
	}
	res := noOpinion("OpenFGA could not answer")
	res.Status.EvaluationError = err.Error()
	return checked{Result: res}
}

func result(allowed bool, q mapping.Query, cache string) Result {
	if allowed {
		return Result{Status: authorizationv1.SubjectAccessReviewStatus{Allowed: true,
			Reason: fmt.Sprintf("OpenFGA: %s is %s of %s", q.User, q.Relation, q.Object)}, Cache: cache}
	}
	return Result{Status: authorizationv1.SubjectAccessReviewStatus{
		Reason: fmt.Sprintf("OpenFGA: %s is not %s of %s", q.User, q.Relation, q.Object)}, Cache: cache}
}
