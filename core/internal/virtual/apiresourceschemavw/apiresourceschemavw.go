// Package apiresourceschemavw serves kcp's APIResourceSchema virtual
// workspace:
//
//	/services/apiresourceschema/<consumer cluster>/clusters/<any>/apis/apis.kcp.io/v1alpha1/apiresourceschemas[/<name>]
//
// It shows, read-only, the APIResourceSchemas bound into the consumer
// (the schemas of the exports its APIBindings bind), wherever they are
// stored, with discovery. The cluster after /clusters/ is not used. Callers
// need the same verb on apibindings in the consumer (RBAC there, workspace
// access included); service accounts of other workspaces are allowed in
// and are matched there by their global name.
package apiresourceschemavw

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	apisv1alpha1 "github.com/kcp-dev/sdk/apis/apis/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/endpoints/handlers/responsewriters"

	builtinapi "github.com/meshplane/meshplane/core/internal/apis/builtin"
	"github.com/meshplane/meshplane/core/internal/clusters"
	"github.com/meshplane/meshplane/core/internal/discovery"
)

// Name is the virtual workspace's name in /services/<name>/.
const Name = "apiresourceschema"

// Target is the consumer a request came through.
type Target struct{ Consumer string }

type contextKey struct{}

// From returns the consumer of the request, if it came through the
// virtual workspace.
func From(ctx context.Context) (Target, bool) {
	t, ok := ctx.Value(contextKey{}).(Target)
	return t, ok
}

// Schema names one APIResourceSchema: its cluster and name.
type Schema struct{ Cluster, Name string }

// Bound lists the schemas bound into a consumer cluster.
type Bound func(ctx context.Context, consumer string) []Schema

const (
	prefix   = "/services/" + Name + "/"
	resource = "apiresourceschemas"
)

var groupVersion = apisv1alpha1.SchemeGroupVersion

// WithVirtualWorkspace rewrites virtual workspace requests: a list or
// watch of apiresourceschemas goes to the wildcard, narrowed to the bound
// schemas; a get to the cluster that stores the bound schema (a schema
// not bound is a 404); anything else to the consumer's cluster. It must
// run before the cluster path filter.
func WithVirtualWorkspace(handler http.Handler, resolve func(string) (string, bool), bound Bound) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rest, ok := strings.CutPrefix(r.URL.Path, prefix)
		if !ok {
			handler.ServeHTTP(w, r)
			return
		}
		parts := strings.SplitN(rest, "/", 3) // consumer, clusters, <any>/...
		if len(parts) < 3 || parts[1] != "clusters" {
			fail(w, r, apierrors.NewNotFound(schema.GroupResource{}, r.URL.Path))
			return
		}
		consumer := parts[0]
		if c, ok := resolve(consumer); ok {
			consumer = c
		}
		if !clusters.IsValidName(consumer) {
			fail(w, r, apierrors.NewBadRequest(fmt.Sprintf("%q does not name a logical cluster", parts[0])))
			return
		}
		_, after, _ := strings.Cut(parts[2], "/") // drop the cluster
		after = "/" + after
		ctx := context.WithValue(r.Context(), contextKey{}, Target{Consumer: consumer})
		path := clusters.Prefix + consumer + after
		list := "/apis/" + groupVersion.String() + "/" + resource
		switch name, isGet := strings.CutPrefix(after, list+"/"); {
		case strings.TrimSuffix(after, "/") == list:
			set := map[Schema]bool{}
			for _, s := range bound(ctx, consumer) {
				set[s] = true
			}
			path = clusters.Prefix + clusters.Wildcard + list
			ctx = clusters.WithFilter(ctx, func(cluster string, obj runtime.Object) bool {
				m, err := meta.Accessor(obj)
				return err == nil && set[Schema{Cluster: cluster, Name: m.GetName()}]
			})
		case isGet && name != "" && !strings.Contains(name, "/"):
			found := ""
			for _, s := range bound(ctx, consumer) {
				if s.Name == name {
					found = s.Cluster
					break
				}
			}
			if found == "" {
				fail(w, r, apierrors.NewNotFound(apisv1alpha1.Resource(resource), name))
				return
			}
			path = clusters.Prefix + found + after
		}
		u := *r.URL
		u.Path, u.RawPath = path, ""
		r = r.WithContext(ctx)
		r.URL = &u
		r.RequestURI = u.RequestURI()
		handler.ServeHTTP(w, r)
	})
}

// WithDiscovery narrows discovery through the virtual workspace to
// apis.kcp.io/v1alpha1 apiresourceschemas, read-only. It must run after
// authentication and authorization.
func WithDiscovery(next http.Handler) http.Handler {
	return discovery.WithReadOnlyNarrowing(next, func(r *http.Request) (discovery.Served, bool, error) {
		if _, ok := From(r.Context()); !ok {
			return nil, false, nil
		}
		return discovery.Served{groupVersion.Group: {resource: true}}, true, nil
	})
}

// Authorizer decides requests through the virtual workspace: reads of
// apiresourceschemas (and discovery) for those who may read apibindings
// in the consumer; nothing else.
type Authorizer struct {
	// RBAC decides the apibindings permission, asked in the consumer.
	RBAC authorizer.Authorizer
}

// Authorize implements authorizer.Authorizer.
func (a Authorizer) Authorize(ctx context.Context, attrs authorizer.Attributes) (authorizer.Decision, string, error) {
	t, ok := From(ctx)
	if !ok {
		return authorizer.DecisionNoOpinion, "", nil
	}
	verb := "list"
	if attrs.IsResourceRequest() {
		if attrs.GetAPIGroup() != groupVersion.Group || attrs.GetResource() != resource || attrs.GetSubresource() != "" {
			return authorizer.DecisionDeny, "only apiresourceschemas are served here", nil
		}
		switch attrs.GetVerb() {
		case "get", "list", "watch":
			verb = attrs.GetVerb()
		default:
			return authorizer.DecisionDeny, "apiresourceschemas are read-only here", nil
		}
	}
	perm := authorizer.AttributesRecord{User: attrs.GetUser(), Verb: verb, APIGroup: "apis.kcp.io", APIVersion: "v1alpha2",
		Resource: "apibindings", ResourceRequest: true}
	if d, _, _ := a.RBAC.Authorize(clusters.WithCluster(ctx, t.Consumer), perm); d != authorizer.DecisionAllow {
		return authorizer.DecisionDeny, fmt.Sprintf("%s may not %s apibindings in logical cluster %s", attrs.GetUser().GetName(), verb, t.Consumer), nil
	}
	return authorizer.DecisionAllow, "", nil
}

// fail answers with err as a Status, as kube-apiserver does.
func fail(w http.ResponseWriter, r *http.Request, err error) {
	responsewriters.ErrorNegotiated(err, builtinapi.Codecs, schema.GroupVersion{}, w, r)
}
