package sharding

import (
	"context"
	"fmt"

	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/meshplane/meshplane/core/internal/clusters"
)

// Authorizer decides a request in a logical cluster of another shard
// with a SubjectAccessReview there (that shard's RBAC, its authorizer
// chain), when Local does not allow it. In this shard's clusters, Local
// decides alone. Virtual workspaces and the bind check ask it about the
// export's or type's cluster, which may be anywhere.
type Authorizer struct {
	Local   authorizer.Authorizer
	Shards  *Shards
	IsLocal func(cluster string) bool
}

// Authorize implements authorizer.Authorizer.
func (a Authorizer) Authorize(ctx context.Context, attrs authorizer.Attributes) (authorizer.Decision, string, error) {
	d, reason, err := a.Local.Authorize(ctx, attrs)
	cluster, _ := clusters.From(ctx)
	if d == authorizer.DecisionAllow || a.Shards == nil || cluster == "" || cluster == clusters.Wildcard || a.IsLocal(cluster) {
		return d, reason, err
	}
	c, ok, herr := a.Shards.Holding(ctx, cluster)
	if herr != nil {
		return authorizer.DecisionNoOpinion, "", herr
	}
	if !ok {
		return d, reason, err
	}
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
	out, err := c.Reviews.Submit(ctx, cluster, sar)
	if err != nil {
		return authorizer.DecisionNoOpinion, "", fmt.Errorf("asking the shard of %s: %w", cluster, err)
	}
	switch {
	case out.Status.Allowed:
		return authorizer.DecisionAllow, out.Status.Reason, nil
	case out.Status.Denied:
		return authorizer.DecisionDeny, out.Status.Reason, nil
	}
	return authorizer.DecisionNoOpinion, out.Status.Reason, nil
}
