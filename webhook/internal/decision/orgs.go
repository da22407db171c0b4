package decision

import (
	"context"
	"fmt"

	authorizationv1 "k8s.io/api/authorization/v1"

	"github.com/meshplane/meshplane/apis/fga"
	"github.com/meshplane/meshplane/webhook/internal/clusters"
	"github.com/meshplane/meshplane/webhook/internal/mapping"
	"github.com/meshplane/meshplane/webhook/internal/orgs"
)

// decideOrg answers a request on the organization name in cluster, when
// cluster is root:orgs: a read of its Account or Workspace by name
// (relation get) or the deletion of its Account (relation delete).
// Allowed for its founder (the Account's creator, its owner from its
// creation on, before its store exists) and for whoever the
// organization's model gives the relation on its Account: owners and
// members read, owners delete. Listing root:orgs is not answered: RBAC
// refuses it, so no tenant learns another organization's name, creator
// or cluster.
func (d *Decider) decideOrg(ctx context.Context, cluster, user string, groups []string, extra map[string]authorizationv1.ExtraValue, name, relation string) Result {
	orgsCluster, err := d.Orgs.Cluster(ctx)
	if err != nil {
		res := noOpinion("reading %s", orgs.Path)
		res.Status.EvaluationError = err.Error()
		return res
	}
	if cluster != orgsCluster {
		return noOpinion("logical cluster %s is no account workspace", cluster)
	}
	// An invitee asking for the organization by name (kubectl ws use
	// root:orgs:<org>, kubectl get account <org>) signs in to it; while
	// the grant is being made, a refusal is asked again.
	if info, ok := d.Clusters.ByPath(clusters.OrgsPrefix + name); ok && d.Invites.Observe(info.Cluster, user, extra) {
		if res := d.decideOrgRead(ctx, cluster, user, groups, name, relation); res.Status.Allowed || res.RetryAfter > 0 {
			return res
		}
		return Result{RetryAfter: d.RetryAfter, Cache: "none",
			Status: authorizationv1.SubjectAccessReviewStatus{Reason: "accepting an invitation of " + user}}
	}
	return d.decideOrgRead(ctx, cluster, user, groups, name, relation)
}

// decideOrgRead answers for the organization name in root:orgs (cluster).
func (d *Decider) decideOrgRead(ctx context.Context, cluster, user string, groups []string, name, relation string) Result {
	founder, found, err := d.Orgs.Founder(ctx, cluster, name)
	switch {
	case err != nil:
		res := noOpinion("reading organization %s", name)
		res.Status.EvaluationError = err.Error()
		return res
	case !found:
		return noOpinion("no organization %s", name)
	case founder != "" && founder == user:
		return Result{Cache: "none", Status: authorizationv1.SubjectAccessReviewStatus{Allowed: true,
			Reason: fmt.Sprintf("%s founded organization %s", user, name)}}
	}
	info, ok := d.Clusters.ByPath(orgs.Path + ":" + name)
	if !ok || info.StoreID == "" || info.OriginCluster != cluster || info.Account != name {
		return noOpinion("organization %s has no store yet", name)
	}
	return d.check(ctx, info, mapping.Query{User: fga.UserID(user), Object: fga.AccountObject(cluster, name), Relation: relation}, groups)
}
