package decision

import (
	"context"
	"fmt"

	authorizationv1 "k8s.io/api/authorization/v1"

	"github.com/meshplane/meshplane/apis/fga"
	"github.com/meshplane/meshplane/webhook/internal/mapping"
	"github.com/meshplane/meshplane/webhook/internal/orgs"
)

// decideOrgRead answers a read of the organization name's Account or
// Workspace by name in cluster, when cluster is root:orgs: allowed for its
// founder (the Account's creator, also before its store exists) and for
// whoever the organization's model lets get its Account (its owners and
// members). Listing root:orgs is not answered: RBAC refuses it, so no
// tenant learns another organization's name, creator or cluster.
func (d *Decider) decideOrgRead(ctx context.Context, cluster, user string, groups []string, name string) Result {
	orgsCluster, err := d.Orgs.Cluster(ctx)
	if err != nil {
		res := noOpinion("reading %s", orgs.Path)
		res.Status.EvaluationError = err.Error()
		return res
	}
	if cluster != orgsCluster {
		return noOpinion("logical cluster %s is no account workspace", cluster)
	}
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
	return d.check(ctx, info, mapping.Query{User: fga.UserID(user), Object: fga.AccountObject(cluster, name), Relation: "get"}, groups)
}
