// Package maximalpermission applies kcp's maximal permission policies: an
// APIExport with spec.maximalPermissionPolicy.local bounds what anybody
// may do with its resources in the workspaces that bind it. A request on
// a bound resource is also asked of RBAC in the export's workspace, with
// the user's name and groups prefixed with "apis.kcp.io:binding:"; what
// that RBAC does not allow is denied, whatever the consumer's RBAC says.
package maximalpermission

import (
	"context"
	"fmt"
	"strings"

	apisv1alpha1 "github.com/kcp-dev/sdk/apis/apis/v1alpha1"
	apisv1alpha2 "github.com/kcp-dev/sdk/apis/apis/v1alpha2"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/meshplane/meshplane/core/internal/apiexport"
	"github.com/meshplane/meshplane/core/internal/authorization/rbac"
	"github.com/meshplane/meshplane/core/internal/clusters"
)

// Prefix is put before the user's name and groups for the policy check.
const Prefix = apisv1alpha1.MaximalPermissionPolicyRBACUserGroupPrefix

// Authorizer denies requests on bound resources that the export's policy
// does not allow; it has no opinion on anything else.
type Authorizer struct {
	// ExportsOf lists the exports a cluster binds.
	ExportsOf func(cluster string) []apiexport.ExportRef
	// Export reads an export.
	Export func(ctx context.Context, cluster, name string) (*apisv1alpha2.APIExport, error)
	// RBAC decides the prefixed request in the export's cluster (in ctx).
	RBAC authorizer.Authorizer
}

// Authorize implements authorizer.Authorizer.
func (a *Authorizer) Authorize(ctx context.Context, attrs authorizer.Attributes) (authorizer.Decision, string, error) {
	if !attrs.IsResourceRequest() || attrs.GetUser() == nil {
		return authorizer.DecisionNoOpinion, "", nil
	}
	cluster, ok := clusters.From(ctx)
	if !ok || cluster == clusters.Wildcard {
		return authorizer.DecisionNoOpinion, "", nil
	}
	for _, g := range attrs.GetUser().GetGroups() {
		if g == user.SystemPrivilegedGroup {
			return authorizer.DecisionNoOpinion, "", nil
		}
	}
	for _, ref := range a.ExportsOf(cluster) {
		export, err := a.Export(ctx, ref.Cluster, ref.Name)
		if err != nil || !exports(export, attrs.GetAPIGroup(), attrs.GetResource()) {
			continue
		}
		if export.Spec.MaximalPermissionPolicy == nil || export.Spec.MaximalPermissionPolicy.Local == nil {
			return authorizer.DecisionNoOpinion, "", nil
		}
		d, reason, err := a.RBAC.Authorize(clusters.WithCluster(ctx, ref.Cluster), prefixed(attrs))
		if err == nil && d == authorizer.DecisionAllow {
			return authorizer.DecisionNoOpinion, "", nil
		}
		return authorizer.DecisionDeny, fmt.Sprintf("API export %q|%q policy: %s", ref.Cluster, ref.Name, reason), nil
	}
	return authorizer.DecisionNoOpinion, "", nil
}

// exports reports whether export exports group/resource.
func exports(export *apisv1alpha2.APIExport, group, resource string) bool {
	for _, r := range export.Spec.Resources {
		if r.Group == group && r.Name == resource {
			return true
		}
	}
	return false
}

// prefixed is attrs with the user's name and groups prefixed. A service
// account is named by its global name (kcp's PrefixUser:
// apis.kcp.io:binding:system:kcp:serviceaccount:<cluster>:<ns>:<name>),
// without the extras that scope it to its own cluster.
func prefixed(attrs authorizer.Attributes) authorizer.AttributesRecord {
	u := attrs.GetUser()
	groups := make([]string, 0, len(u.GetGroups()))
	for _, g := range u.GetGroups() {
		groups = append(groups, Prefix+g)
	}
	name, extra := Prefix+u.GetName(), u.GetExtra()
	if c := extra[rbac.ClusterExtraKey]; strings.HasPrefix(u.GetName(), "system:serviceaccount:") && len(c) == 1 {
		name = Prefix + rbac.GlobalServiceAccountName(c[0], u.GetName())
		extra = map[string][]string{}
		for k, v := range u.GetExtra() {
			if k != rbac.ClusterExtraKey && k != rbac.ScopeExtraKey {
				extra[k] = v
			}
		}
	}
	return authorizer.AttributesRecord{
		User:      &user.DefaultInfo{Name: name, UID: u.GetUID(), Groups: groups, Extra: extra},
		Verb:      attrs.GetVerb(),
		Namespace: attrs.GetNamespace(), APIGroup: attrs.GetAPIGroup(), APIVersion: attrs.GetAPIVersion(),
		Resource: attrs.GetResource(), Subresource: attrs.GetSubresource(), Name: attrs.GetName(),
		ResourceRequest: true, Path: attrs.GetPath(),
	}
}
