package decision

import (
	"context"
	"errors"
	"fmt"
	"slices"

	authorizationv1 "k8s.io/api/authorization/v1"

	"github.com/meshplane/meshplane/apis/fga"
	"github.com/meshplane/meshplane/webhook/internal/fgacheck"
	"github.com/meshplane/meshplane/webhook/internal/mapping"
)

// Batcher asks many Checks at once.
type Batcher interface {
	BatchCheck(ctx context.Context, store, model string, qs []mapping.Query) ([]bool, error)
}

// probeName names no real object (no Kubernetes name has a "/"):
// a Check on it answers what the user may do with every object of a kind
// through the account tree, not through grants on single objects.
const probeName = "rules/probe"

// ruleVerbs are the verbs a rule may list.
var ruleVerbs = []string{"get", "list", "watch", "create", "update", "patch", "delete"}

// Rules answers "what may user do in namespace of cluster" from OpenFGA
// (one BatchCheck per 50 questions): for each built-in kind and the
// Account kind, the verbs the model grants through the account tree,
// and the discovery paths for members. Grants on single objects and
// resources of bound APIs are not listed: the answer is then marked
// incomplete, as kube marks a webhook's.
func (d *Decider) Rules(ctx context.Context, b Batcher, user string, groups []string, cluster, namespace string) (authorizationv1.SubjectRulesReviewStatus, error) {
	status := authorizationv1.SubjectRulesReviewStatus{Incomplete: true}
	info, _, known := d.Clusters.Get(cluster)
	if !known || info.StoreID == "" {
		return status, nil
	}
	model, err := d.models.Current(ctx, info.StoreID)
	if err != nil {
		return status, err
	}
	ws := mapping.Workspace{Cluster: cluster, Account: fga.AccountObject(info.OriginCluster, info.Account)}
	type asked struct {
		res  fga.Resource
		verb string
	}
	var qs []mapping.Query
	var what []asked
	for _, res := range append([]fga.Resource{fga.AccountResource}, fga.BuiltinResources...) {
		if res.Namespaced && namespace == "" {
			continue
		}
		for _, verb := range ruleVerbs {
			ra := &authorizationv1.ResourceAttributes{Verb: verb, Group: res.Group, Resource: res.Plural, Name: probeName}
			if res.Namespaced {
				ra.Namespace = namespace
			}
			q, err := mapping.ForResource(ws, user, ra, res)
			if err != nil {
				continue
			}
			qs = append(qs, q)
			what = append(what, asked{res, verb})
		}
	}
	discovery, _ := mapping.ForNonResource(ws, user, &authorizationv1.NonResourceAttributes{Path: "/api", Verb: "get"})
	qs = append(qs, discovery)
	answers, err := b.BatchCheck(ctx, info.StoreID, model, withGroups(qs, groups))
	if errors.Is(err, fgacheck.ErrInvalid) && len(groups) > 0 {
		// A model without groups: asked without them.
		answers, err = b.BatchCheck(ctx, info.StoreID, model, qs)
	}
	if err != nil {
		return status, err
	}
	byResource := map[fga.Resource][]string{}
	var order []fga.Resource
	for i, a := range what {
		if !answers[i] {
			continue
		}
		if _, ok := byResource[a.res]; !ok {
			order = append(order, a.res)
		}
		byResource[a.res] = append(byResource[a.res], a.verb)
	}
	for _, res := range order {
		status.ResourceRules = append(status.ResourceRules, authorizationv1.ResourceRule{
			Verbs: slices.Clone(byResource[res]), APIGroups: []string{res.Group}, Resources: []string{res.Plural}})
	}
	if answers[len(answers)-1] {
		status.NonResourceRules = append(status.NonResourceRules, authorizationv1.NonResourceRule{Verbs: []string{"get"},
			NonResourceURLs: []string{"/api", "/api/*", "/apis", "/apis/*", "/openapi", "/openapi/*", "/version", "/version/*"}})
	}
	return status, nil
}

// Describe is a short text of a rules answer (for logs).
func Describe(s authorizationv1.SubjectRulesReviewStatus) string {
	return fmt.Sprintf("%d resource rules, %d non-resource rules", len(s.ResourceRules), len(s.NonResourceRules))
}

func withGroups(qs []mapping.Query, groups []string) []mapping.Query {
	out := make([]mapping.Query, len(qs))
	for i, q := range qs {
		out[i] = mapping.WithGroups(q, groups)
	}
	return out
}
