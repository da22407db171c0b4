// Package systemstatus keeps everybody but the system's own identities
// away from the status of the objects whose status only the system
// writes, as kcp does: its system CRD authorizer refuses the status
// subresource of APIBindings and APIExports (every verb), and the
// maximal permission policy of its tenancy.kcp.io export leaves users
// only get, list and watch on the status of Workspaces and
// WorkspaceTypes. Meshplane refuses the same requests to everybody who
// is not a system identity (authorization/privileged: system:masters and
// kcp's component groups, never impersonated), whatever RBAC grants,
// and also writes of the status of APIExportEndpointSlices and Shards,
// whose URLs clients follow. kcp-admin (system:kcp:admin, not
// impersonated) may write the status of tenancy.kcp.io objects, as kcp's
// policy for that export grants it.
package systemstatus

import (
	"context"
	"fmt"
	"slices"

	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/meshplane/meshplane/core/internal/authorization/bootstrap"
	"github.com/meshplane/meshplane/core/internal/authorization/privileged"
)

type resource struct{ group, resource string }

// allVerbs are the resources whose status subresource is refused for
// every verb (kcp's system CRD authorizer).
var allVerbs = map[resource]bool{
	{"apis.kcp.io", "apibindings"}: true,
	{"apis.kcp.io", "apiexports"}:  true,
}

// writes are the resources whose status may be read but not written.
// (A LogicalCluster's status is left to its admission: initializers and
// terminators write it.)
var writes = map[resource]bool{
	{"tenancy.kcp.io", "workspaces"}:           true,
	{"tenancy.kcp.io", "workspacetypes"}:       true,
	{"apis.kcp.io", "apiexportendpointslices"}: true,
	{"core.kcp.io", "shards"}:                  true,
}

// Authorizer denies the requests above to non-system identities and has
// no opinion on anything else.
var Authorizer = authorizer.AuthorizerFunc(authorize)

func authorize(ctx context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	if !a.IsResourceRequest() || a.GetSubresource() != "status" {
		return authorizer.DecisionNoOpinion, "", nil
	}
	r := resource{a.GetAPIGroup(), a.GetResource()}
	switch {
	case allVerbs[r]:
	case writes[r] && !readOnly(a.GetVerb()):
	default:
		return authorizer.DecisionNoOpinion, "", nil
	}
	if privileged.System(ctx, a.GetUser()) {
		return authorizer.DecisionNoOpinion, "", nil
	}
	if r.group == "tenancy.kcp.io" && kcpAdmin(ctx, a.GetUser()) {
		// kcp's maximal permission policy of its tenancy.kcp.io export
		// grants kcp-admin everything of the group, status included.
		return authorizer.DecisionNoOpinion, "", nil
	}
	return authorizer.DecisionDeny, fmt.Sprintf("%s status updates not permitted: the status of %s.%s is written by the system only",
		singular(r.resource), r.resource, r.group), nil
}

// kcpAdmin reports whether u is kcp-admin (group system:kcp:admin) as
// itself, not impersonated.
func kcpAdmin(ctx context.Context, u user.Info) bool {
	return u != nil && slices.Contains(u.GetGroups(), bootstrap.KCPAdminGroup) && !privileged.Impersonated(ctx)
}

func readOnly(verb string) bool {
	return verb == "get" || verb == "list" || verb == "watch"
}

func singular(resource string) string {
	if len(resource) > 1 && resource[len(resource)-1] == 's' {
		return resource[:len(resource)-1]
	}
	return resource
}
