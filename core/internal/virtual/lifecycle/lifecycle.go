// Package lifecycle serves kcp's initializing and terminating virtual
// workspaces:
//
//	/services/initializingworkspaces/<initializer>/clusters/*/apis/core.kcp.io/v1alpha1/logicalclusters
//	/services/terminatingworkspaces/<terminator>/clusters/<cluster>/...
//
// The wildcard lists and watches the LogicalClusters that still carry the
// initializer (or terminator); a single cluster is reachable while it
// does. Callers need verb "initialize" (or "terminate") on the
// WorkspaceType the id names.
package lifecycle

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"

	corev1alpha1 "github.com/kcp-dev/sdk/apis/core/v1alpha1"
	"github.com/kcp-dev/sdk/apis/tenancy/initialization"
	"github.com/kcp-dev/sdk/apis/tenancy/termination"
	tenancyv1alpha1 "github.com/kcp-dev/sdk/apis/tenancy/v1alpha1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/endpoints/handlers/responsewriters"

	builtinapi "github.com/meshplane/meshplane/core/internal/apis/builtin"
	"github.com/meshplane/meshplane/core/internal/authorization/rbac"
	"github.com/meshplane/meshplane/core/internal/clusters"
)

// Kind tells the two virtual workspaces apart.
type Kind string

// The lifecycle virtual workspaces.
const (
	Initializing Kind = "initializingworkspaces"
	Terminating  Kind = "terminatingworkspaces"
)

// Target is the virtual workspace a request came through.
type Target struct {
	Kind Kind
	// ID is the initializer or terminator, <cluster>:<type name>.
	ID string
}

type contextKey struct{}

// unresolvedKey marks a request under /services/<kind>/ that names no
// cluster.
type unresolvedKey struct{}

// From returns the virtual workspace of the request, if any.
func From(ctx context.Context) (Target, bool) {
	t, ok := ctx.Value(contextKey{}).(Target)
	return t, ok
}

// label is the label selecting clusters that carry the id.
func (t Target) label() string {
	var k, v string
	if t.Kind == Initializing {
		k, v = initialization.InitializerToLabel(corev1alpha1.LogicalClusterInitializer(t.ID))
	} else {
		k, v = termination.TerminatorToLabel(corev1alpha1.LogicalClusterTerminator(t.ID))
	}
	return k + "=" + v
}

// WithVirtualWorkspaces rewrites /services/<kind>/<id>/clusters/... to
// /clusters/... and records the virtual workspace in the context; a list
// or watch of LogicalClusters on the wildcard is narrowed to the clusters
// carrying the id. It must run before the cluster path filter. A path
// under /services/<kind>/ that names no cluster goes on unchanged, marked
// for the Authorizer; a malformed id is answered with a 400.
func WithVirtualWorkspaces(handler http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rest, ok := strings.CutPrefix(r.URL.Path, "/services/")
		if !ok {
			handler.ServeHTTP(w, r)
			return
		}
		parts := strings.SplitN(rest, "/", 3)
		if Kind(parts[0]) != Initializing && Kind(parts[0]) != Terminating {
			handler.ServeHTTP(w, r)
			return
		}
		if len(parts) < 3 || !strings.HasPrefix(parts[2], "clusters/") {
			// As kcp's virtual workspace server: the path resolves to no
			// virtual workspace, so the request goes on unchanged, is
			// refused (403) to everybody but system:masters and found
			// nowhere (404) for them.
			handler.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), unresolvedKey{}, true)))
			return
		}
		if !validID(parts[1]) {
			fail(w, r, apierrors.NewBadRequest(fmt.Sprintf("%q does not name a virtual workspace: want /services/%s/<cluster>:<workspace type>/clusters/...",
				r.URL.Path, parts[0])))
			return
		}
		t := Target{Kind: Kind(parts[0]), ID: parts[1]}
		u := *r.URL
		u.Path = "/" + parts[2]
		u.RawPath = ""
		if strings.HasPrefix(u.Path, clusters.Prefix+clusters.Wildcard+"/apis/core.kcp.io/v1alpha1/logicalclusters") {
			q := u.Query()
			sel := t.label()
			if existing := q.Get("labelSelector"); existing != "" {
				sel = existing + "," + sel
			}
			q.Set("labelSelector", sel)
			u.RawQuery = q.Encode()
		}
		if v, ok := writeNotSupported(r.Method, u.Path); ok {
			fail(w, r, methodNotSupported(v))
			return
		}
		r = r.WithContext(context.WithValue(r.Context(), contextKey{}, t))
		r.URL = &u
		r.RequestURI = u.RequestURI()
		handler.ServeHTTP(w, r)
	})
}

// validID reports whether id is <cluster>:<workspace type name>.
func validID(id string) bool {
	i := strings.LastIndex(id, ":")
	return i > 0 && clusters.IsValidPath(id[:i]) && clusters.IsValidName(id[i+1:])
}

// fail answers with err as a Status, as kube-apiserver does.
func fail(w http.ResponseWriter, r *http.Request, err error) {
	responsewriters.ErrorNegotiated(err, builtinapi.Codecs, schema.GroupVersion{}, w, r)
}

// Clusters reads a cluster's LogicalCluster.
type Clusters interface {
	Get(cluster string) (*corev1alpha1.LogicalCluster, bool)
}

// Authorizer decides requests through the lifecycle virtual workspaces; it
// has no opinion on other requests.
type Authorizer struct {
	// RBAC decides the initialize/terminate permission on the type.
	RBAC     authorizer.Authorizer
	Clusters Clusters
	// Permissions, when set, returns the type's initializerPermissions
	// (terminatorPermissions for Terminating): when it declares any, a
	// request for a cluster's content (anything but its LogicalCluster and
	// discovery) is allowed only as far as they grant, as in kcp.
	Permissions func(ctx context.Context, typeCluster, typeName string, kind Kind) ([]rbacv1.PolicyRule, error)
}

// Authorize implements authorizer.Authorizer.
func (a Authorizer) Authorize(ctx context.Context, attrs authorizer.Attributes) (authorizer.Decision, string, error) {
	if unresolved, _ := ctx.Value(unresolvedKey{}).(bool); unresolved {
		if u := attrs.GetUser(); u != nil && slices.Contains(u.GetGroups(), user.SystemPrivilegedGroup) {
			return authorizer.DecisionNoOpinion, "", nil
		}
		return authorizer.DecisionDeny, "Path not resolved to a valid virtual workspace", nil
	}
	t, ok := From(ctx)
	if !ok {
		return authorizer.DecisionNoOpinion, "", nil
	}
	i := strings.LastIndex(t.ID, ":")
	typeCluster, typeName := t.ID[:i], t.ID[i+1:]
	verb := "initialize"
	if t.Kind == Terminating {
		verb = "terminate"
	}
	perm := authorizer.AttributesRecord{User: attrs.GetUser(), Verb: verb, APIGroup: tenancyv1alpha1.SchemeGroupVersion.Group,
		APIVersion: tenancyv1alpha1.SchemeGroupVersion.Version, Resource: "workspacetypes", Name: typeName, ResourceRequest: true}
	if d, _, _ := a.RBAC.Authorize(clusters.WithCluster(ctx, typeCluster), perm); d != authorizer.DecisionAllow {
		return authorizer.DecisionDeny, fmt.Sprintf("%s may not %s workspaces of type %s", attrs.GetUser().GetName(), verb, t.ID), nil
	}
	cluster, _ := clusters.From(ctx)
	if cluster == clusters.Wildcard {
		if !attrs.IsResourceRequest() {
			return authorizer.DecisionAllow, "", nil // discovery
		}
		if attrs.GetAPIGroup() == corev1alpha1.SchemeGroupVersion.Group && attrs.GetResource() == "logicalclusters" &&
			(attrs.GetVerb() == "list" || attrs.GetVerb() == "watch") {
			return authorizer.DecisionAllow, "", nil
		}
		return authorizer.DecisionDeny, "only logicalclusters can be listed and watched across clusters here", nil
	}
	lc, ok := a.Clusters.Get(cluster)
	if !ok || !carries(lc, t) {
		return authorizer.DecisionDeny, fmt.Sprintf("logical cluster %s is not %s with %s", cluster, strings.TrimSuffix(string(t.Kind), "workspaces"), t.ID), nil
	}
	if a.Permissions == nil || !attrs.IsResourceRequest() ||
		(attrs.GetAPIGroup() == corev1alpha1.SchemeGroupVersion.Group && attrs.GetResource() == "logicalclusters") {
		return authorizer.DecisionAllow, "", nil
	}
	rules, err := a.Permissions(ctx, typeCluster, typeName, t.Kind)
	if err != nil {
		return authorizer.DecisionNoOpinion, "", err
	}
	if len(rules) > 0 && !rbac.RulesAllow(attrs, rules...) {
		return authorizer.DecisionDeny, fmt.Sprintf("no rule of the %s permissions of workspace type %s allows %s on %s",
			strings.TrimSuffix(string(t.Kind), "workspaces"), t.ID, attrs.GetVerb(), resourcePath(attrs)), nil
	}
	return authorizer.DecisionAllow, "", nil
}

// resourcePath names the resource of a request for a refusal.
func resourcePath(a authorizer.Attributes) string {
	out := a.GetAPIGroup()
	if out == "" {
		out = "core"
	}
	out += "/" + a.GetResource()
	if a.GetSubresource() != "" {
		out += "/" + a.GetSubresource()
	}
	if a.GetName() != "" {
		out += " (" + a.GetName() + ")"
	}
	if a.GetNamespace() != "" {
		out += " in namespace " + a.GetNamespace()
	}
	return out
}

func carries(lc *corev1alpha1.LogicalCluster, t Target) bool {
	if t.Kind == Initializing {
		return lc.Status.Phase == corev1alpha1.LogicalClusterPhaseInitializing &&
			initialization.InitializerPresent(corev1alpha1.LogicalClusterInitializer(t.ID), lc.Status.Initializers)
	}
	return lc.DeletionTimestamp != nil &&
		termination.TerminatorPresent(corev1alpha1.LogicalClusterTerminator(t.ID), lc.Status.Terminators)
}
