// Package apiexportvw serves kcp's APIExport virtual workspace:
//
//	/services/apiexport/<export cluster>/<export name>/clusters/<consumer|*>/...
//
// On the wildcard a provider lists and watches the exported resources of
// every consumer that binds the export (the storage under the export's
// identity); in one consumer it reads and writes the exported resources
// and the resources whose permission claims the consumer accepted.
// Callers need verb "content" on the APIExport.
package apiexportvw

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	apisv1alpha2 "github.com/kcp-dev/sdk/apis/apis/v1alpha2"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/endpoints/handlers/responsewriters"
	"k8s.io/apiserver/pkg/endpoints/request"

	"github.com/meshplane/meshplane/core/internal/apiexport"
	builtinapi "github.com/meshplane/meshplane/core/internal/apis/builtin"
	"github.com/meshplane/meshplane/core/internal/clusters"
)

// Target is the export a request came through.
type Target struct {
	Cluster, Name string
}

type contextKey struct{}

// From returns the export of the request, if it came through its virtual
// workspace.
func From(ctx context.Context) (Target, bool) {
	t, ok := ctx.Value(contextKey{}).(Target)
	return t, ok
}

// Plain returns ctx without the export target: checks the core makes on
// its own behalf while serving a virtual workspace request (such as verb
// "use" on a workspace type, asked in the type's cluster) are decided as
// plain requests, as kcp's shard decides them.
func Plain(ctx context.Context) context.Context {
	if _, ok := From(ctx); !ok {
		return ctx
	}
	return context.WithValue(ctx, contextKey{}, nil)
}

// boundBy reports whether b binds this export.
func (t Target) boundBy(b *apisv1alpha2.APIBinding) bool {
	return b.Spec.Reference.Export != nil && b.Spec.Reference.Export.Name == t.Name && b.Status.APIExportClusterName == t.Cluster
}

// Exports looks up exports and their served resources.
type Exports interface {
	// Export returns an export.
	Export(ctx context.Context, cluster, name string) (*apisv1alpha2.APIExport, error)
	// Resources returns the CRDs of the export's resources.
	Resources(ctx context.Context, cluster, name string) ([]*apiextensionsv1.CustomResourceDefinition, error)
	// Binding returns the consumer's binding of the export, if any.
	Binding(ctx context.Context, consumer, exportCluster, exportName string) (*apisv1alpha2.APIBinding, bool)
	// Accepted reports whether consumer binds the export and, for a claimed
	// resource, accepted the claim.
	Accepted(consumer, exportCluster, exportName, group, resource string, exported bool) bool
	// Claim returns the claim on group/resource the consumer's binding of
	// the export applies, if any.
	Claim(consumer, exportCluster, exportName, group, resource string) (apiexport.Claim, bool)
	// BuiltinGroup reports whether the server serves group itself (a claim
	// on it names that resource whatever its identity hash).
	BuiltinGroup(group string) bool
	// Serves reports whether consumer serves group/resource bound under
	// identity (not a CRD or another binding's resource of that name).
	Serves(consumer, group, resource, identity string) bool
}

// selects reports whether the consumer's claim of the export picks obj.
func selects(exports Exports, t Target, cluster, group, resource string, obj runtime.Object) bool {
	claim, ok := exports.Claim(cluster, t.Cluster, t.Name, group, resource)
	if !ok {
		return false
	}
	m, err := meta.Accessor(obj)
	return err == nil && claim.Selects(m.GetLabels())
}

// WithVirtualWorkspace rewrites virtual workspace requests to plain
// cluster requests, naming bound resources by identity on the wildcard.
// It must run before the cluster path filter. A path under
// /services/apiexport/ that names no cluster is answered with a 404
// Status, a malformed workspace path or export name with a 400.
func WithVirtualWorkspace(handler http.Handler, exports Exports) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rest, ok := strings.CutPrefix(r.URL.Path, "/services/apiexport/")
		if !ok {
			handler.ServeHTTP(w, r)
			return
		}
		parts := strings.SplitN(rest, "/", 3)
		if len(parts) < 3 || !strings.HasPrefix(parts[2], "clusters/") {
			fail(w, r, notFound(r.URL.Path))
			return
		}
		if !clusters.IsValidPath(parts[0]) || len(validation.IsDNS1123Subdomain(parts[1])) > 0 {
			fail(w, r, apierrors.NewBadRequest(fmt.Sprintf("%q does not name an APIExport virtual workspace: want /services/apiexport/<workspace path>/<export name>/clusters/...",
				r.URL.Path)))
			return
		}
		t := Target{Cluster: parts[0], Name: parts[1]}
		path := "/" + parts[2]
		ctx := context.WithValue(r.Context(), contextKey{}, t)
		if strings.HasPrefix(path, clusters.Prefix+clusters.Wildcard+"/") {
			var group, resource string
			var exported bool
			path, group, resource, exported = withIdentity(ctx, exports, t, path)
			// A wildcard list shows only consumers of the export that, for
			// claimed resources, accepted the claim; of APIBindings, only
			// those of this export.
			ctx = clusters.WithFilter(ctx, func(cluster string, obj runtime.Object) bool {
				if group == apisv1alpha2.SchemeGroupVersion.Group && resource == "apibindings" {
					b, ok := obj.(*apisv1alpha2.APIBinding)
					return ok && t.boundBy(b)
				}
				if exported {
					return exports.Accepted(cluster, t.Cluster, t.Name, group, resource, true)
				}
				return selects(exports, t, cluster, group, resource, obj)
			})
		} else if group, resource, ok := resourceOf(r, path); ok && !(group == apisv1alpha2.SchemeGroupVersion.Group && resource == "apibindings") &&
			!exportsResource(ctx, exports, t, group, resource) {
			// In one consumer, a claimed resource shows only the objects the
			// claim's selector picks (the authorizer refuses the rest).
			ctx = clusters.WithResourceSelector(ctx, schema.GroupResource{Group: group, Resource: resource}, func(cluster string, obj runtime.Object) bool {
				return selects(exports, t, cluster, group, resource, obj)
			}, func(cluster string) labels.Selector {
				// Lists and watches select with the claim's labels, so an
				// object leaving the selector is DELETED from a watch.
				if claim, ok := exports.Claim(cluster, t.Cluster, t.Name, group, resource); ok {
					return claim.LabelSelector()
				}
				return nil
			})
		}
		u := *r.URL
		u.Path, u.RawPath = path, ""
		r = r.WithContext(ctx)
		r.URL = &u
		r.RequestURI = u.RequestURI()
		handler.ServeHTTP(w, r)
	})
}

// requestInfos parses the resource of a rewritten request.
var requestInfos = &request.RequestInfoFactory{APIPrefixes: sets.NewString("api", "apis"), GrouplessAPIPrefixes: sets.NewString("api")}

// resourceOf returns the resource a /clusters/<cluster>/... path names.
func resourceOf(r *http.Request, path string) (string, string, bool) {
	_, rest, ok := strings.Cut(strings.TrimPrefix(path, clusters.Prefix), "/")
	if !ok {
		return "", "", false
	}
	u := *r.URL
	u.Path = "/" + rest
	info, err := requestInfos.NewRequestInfo(&http.Request{Method: r.Method, URL: &u})
	if err != nil || !info.IsResourceRequest {
		return "", "", false
	}
	return info.APIGroup, info.Resource, true
}

// exportsResource reports whether the export exports group/resource.
func exportsResource(ctx context.Context, exports Exports, t Target, group, resource string) bool {
	export, err := exports.Export(ctx, t.Cluster, t.Name)
	if err != nil {
		return false
	}
	for _, res := range export.Spec.Resources {
		if res.Group == group && res.Name == resource {
			return true
		}
	}
	return false
}

// notFound is the Status of a path that names no virtual workspace.
func notFound(path string) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: http.StatusNotFound,
		Reason: metav1.StatusReasonNotFound, Message: fmt.Sprintf("%s names no virtual workspace cluster: want .../clusters/<cluster>/...", path)}}
}

// fail answers with err as a Status, as kube-apiserver does.
func fail(w http.ResponseWriter, r *http.Request, err error) {
	responsewriters.ErrorNegotiated(err, builtinapi.Codecs, schema.GroupVersion{}, w, r)
}

// withIdentity appends the export's identity to an exported resource in
// /clusters/*/apis/<group>/<version>/<resource>[/...] and returns the
// resource the path names.
func withIdentity(ctx context.Context, exports Exports, t Target, path string) (string, string, string, bool) {
	segs := strings.Split(path, "/") // "", clusters, *, apis, group, version, resource, ...
	var group string
	at := 6 // the resource's segment
	switch {
	case len(segs) >= 6 && segs[3] == "api":
		at = 5
	case len(segs) >= 7 && segs[3] == "apis":
		group = segs[4]
	default:
		return path, "", "", false
	}
	resource, _, _ := strings.Cut(segs[at], ":")
	export, err := exports.Export(ctx, t.Cluster, t.Name)
	if err != nil || export.Status.IdentityHash == "" {
		return path, group, resource, false
	}
	for _, res := range export.Spec.Resources {
		if res.Group == group && res.Name == resource {
			segs[at] = resource + ":" + export.Status.IdentityHash
			return strings.Join(segs, "/"), group, resource, true
		}
	}
	// A claim on another export's resource names it by that identity.
	for _, c := range export.Spec.PermissionClaims {
		if c.Group == group && c.Resource == resource && c.IdentityHash != "" && segs[3] == "apis" && !exports.BuiltinGroup(group) {
			segs[at] = resource + ":" + c.IdentityHash
			return strings.Join(segs, "/"), group, resource, false
		}
	}
	return path, group, resource, false
}

// Authorizer decides requests through the virtual workspace.
type Authorizer struct {
	RBAC    authorizer.Authorizer
	Exports Exports
}

// Authorize implements authorizer.Authorizer.
func (a Authorizer) Authorize(ctx context.Context, attrs authorizer.Attributes) (authorizer.Decision, string, error) {
	t, ok := From(ctx)
	if !ok {
		return authorizer.DecisionNoOpinion, "", nil
	}
	// RBAC may be the server's whole authorizer chain: ask it as a plain
	// request in the export's workspace.
	plain := clusters.WithCluster(Plain(ctx), t.Cluster)
	content := authorizer.AttributesRecord{User: attrs.GetUser(), Verb: "content", APIGroup: apisv1alpha2.SchemeGroupVersion.Group,
		APIVersion: apisv1alpha2.SchemeGroupVersion.Version, Resource: "apiexports", Name: t.Name, ResourceRequest: true}
	if d, _, _ := a.RBAC.Authorize(plain, content); d != authorizer.DecisionAllow {
		viaSub := content
		viaSub.Verb, viaSub.Subresource = attrs.GetVerb(), "content"
		if d, _, _ := a.RBAC.Authorize(plain, viaSub); d != authorizer.DecisionAllow {
			return authorizer.DecisionDeny, fmt.Sprintf("%s may not access the content of APIExport %s|%s", attrs.GetUser().GetName(), t.Cluster, t.Name), nil
		}
	}
	if !attrs.IsResourceRequest() {
		return authorizer.DecisionAllow, "", nil // discovery
	}
	export, err := a.Exports.Export(ctx, t.Cluster, t.Name)
	if err != nil {
		return authorizer.DecisionDeny, fmt.Sprintf("APIExport %s|%s not found", t.Cluster, t.Name), nil
	}
	resource, identity, _ := strings.Cut(attrs.GetResource(), ":")
	if attrs.GetAPIGroup() == apisv1alpha2.SchemeGroupVersion.Group && resource == "apibindings" {
		// Providers follow their consumers' bindings (read only).
		if v := attrs.GetVerb(); v == "get" || v == "list" || v == "watch" {
			return authorizer.DecisionAllow, "", nil
		}
		return authorizer.DecisionDeny, "APIBindings are read-only here", nil
	}
	exported := false
	for _, r := range export.Spec.Resources {
		if r.Group == attrs.GetAPIGroup() && r.Name == resource {
			exported = true
		}
	}
	cluster, _ := clusters.From(ctx)
	if cluster == clusters.Wildcard {
		listing := attrs.GetVerb() == "list" || attrs.GetVerb() == "watch"
		if listing && exported && identity == export.Status.IdentityHash {
			return authorizer.DecisionAllow, "", nil
		}
		if listing && !exported && claims(export, attrs.GetAPIGroup(), resource) {
			return authorizer.DecisionAllow, "", nil // narrowed to accepting consumers by the filter
		}
		return authorizer.DecisionDeny, "only the exported and claimed resources can be listed and watched across consumers", nil
	}
	binding, ok := a.Exports.Binding(ctx, cluster, t.Cluster, t.Name)
	if !ok {
		return authorizer.DecisionDeny, fmt.Sprintf("logical cluster %s does not bind APIExport %s", cluster, t.Name), nil
	}
	if exported {
		// Only what the binding serves: a resource of the export that a CRD
		// or another binding holds there is theirs (NamingConflicts).
		if a.Exports.Serves(cluster, attrs.GetAPIGroup(), resource, export.Status.IdentityHash) {
			return authorizer.DecisionAllow, "", nil
		}
		return authorizer.DecisionDeny, fmt.Sprintf("APIBinding %s in logical cluster %s does not bind %s of APIExport %s", binding.Name, cluster, attrs.GetResource(), t.Name), nil
	}
	if allowed, ok := claimVerbs(export, binding, attrs.GetAPIGroup(), resource); ok {
		if allowed.HasAny(attrs.GetVerb(), "*") {
			return authorizer.DecisionAllow, "", nil
		}
		return authorizer.DecisionDeny, verbRefused(attrs.GetVerb(), attrs.GetResource(), t.Name, binding.Name, allowed), nil
	}
	return authorizer.DecisionDeny, fmt.Sprintf("%s is neither exported by %s nor an accepted permission claim", attrs.GetResource(), t.Name), nil
}

// claimVerbs returns, as kcp, the verbs a provider may use on a claimed
// resource: those both the export's claim and the binding's accepted claim
// name. ok is false when the binding accepted no claim the export makes on
// it.
func claimVerbs(export *apisv1alpha2.APIExport, binding *apisv1alpha2.APIBinding, group, resource string) (sets.Set[string], bool) {
	for _, claim := range binding.Spec.PermissionClaims {
		if claim.State != apisv1alpha2.ClaimAccepted || claim.Group != group || claim.Resource != resource {
			continue
		}
		for _, ec := range export.Spec.PermissionClaims {
			if ec.EqualGRI(claim.PermissionClaim) {
				return sets.New(claim.Verbs...).Intersection(sets.New(ec.Verbs...)), true
			}
		}
	}
	return nil, false
}

func verbRefused(verb, resource, export, binding string, allowed sets.Set[string]) string {
	return fmt.Sprintf("verb %q on %s is not among the verbs of the permission claim both APIExport %s and APIBinding %s name (%v)",
		verb, resource, export, binding, sets.List(allowed))
}

// claims reports whether the export claims group/resource.
func claims(export *apisv1alpha2.APIExport, group, resource string) bool {
	for _, c := range export.Spec.PermissionClaims {
		if c.Group == group && c.Resource == resource {
			return true
		}
	}
	return false
}
