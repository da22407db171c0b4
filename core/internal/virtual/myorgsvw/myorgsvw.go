// Package myorgsvw serves the "My organizations" virtual workspace:
//
//	/services/myorgs/clusters/root:orgs/apis/core.platform-mesh.io/v1alpha1/accounts[/<name>]
//
// It shows, read-only (get, list, watch), the organization Accounts of
// root:orgs the caller has a role in, and nothing else: root:orgs itself
// is not listable by tenants. Which organizations those are is the
// authorization webhook's answer (its /organizations path: founders and
// the roles in each organization's OpenFGA store), asked once per request
// after authentication and again during a watch when older than TTL. An
// Account outside the answer is not found (get) and left out (list,
// watch). Any authenticated user may ask; discovery shows the one
// resource.
package myorgsvw

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/endpoints/handlers/responsewriters"

	builtinapi "github.com/meshplane/meshplane/core/internal/apis/builtin"
	"github.com/meshplane/meshplane/core/internal/clusters"
	"github.com/meshplane/meshplane/core/internal/discovery"
)

// Name is the virtual workspace's name in /services/<name>/.
const Name = "myorgs"

// Workspace is the only workspace served: where organizations live.
const Workspace = "root:orgs"

// TTL is how long a watch keeps an answer before asking again.
const TTL = 2 * time.Second

const prefix = "/services/" + Name + "/clusters/"

// Resource is what the virtual workspace serves.
var Resource = schema.GroupResource{Group: "core.platform-mesh.io", Resource: "accounts"}

// Lister answers which organizations a user has a role in.
type Lister interface {
	For(ctx context.Context, u user.Info) ([]string, error)
}

// membership is a request's answer, filled by the Authorizer (after
// authentication) and read by the storage's filter.
type membership struct {
	lister Lister

	mu    sync.Mutex
	user  user.Info
	names map[string]bool
	at    time.Time
}

// load asks the lister for u's organizations.
func (m *membership) load(ctx context.Context, u user.Info) error {
	names, err := m.lister.For(ctx, u)
	m.mu.Lock()
	defer m.mu.Unlock()
	m.user = u
	if err != nil {
		m.names, m.at = nil, time.Time{}
		return err
	}
	m.names, m.at = make(map[string]bool, len(names)), time.Now()
	for _, n := range names {
		m.names[n] = true
	}
	return nil
}

// has reports whether name is one of the user's organizations, asking
// again when the answer is older than TTL (a watch); nothing is shown
// while no answer is known.
func (m *membership) has(name string) bool {
	m.mu.Lock()
	u, stale := m.user, time.Since(m.at) > TTL
	m.mu.Unlock()
	if u != nil && stale {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_ = m.load(ctx, u)
		cancel()
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.names[name]
}

type contextKey struct{}

func from(ctx context.Context) (*membership, bool) {
	m, ok := ctx.Value(contextKey{}).(*membership)
	return m, ok
}

// WithVirtualWorkspace rewrites requests of the virtual workspace to
// root:orgs with the membership filter on accounts. lister nil: the
// virtual workspace is off (404). It must run before the cluster path
// filter.
func WithVirtualWorkspace(handler http.Handler, lister Lister) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rest, ok := strings.CutPrefix(r.URL.Path, prefix)
		if !ok {
			handler.ServeHTTP(w, r)
			return
		}
		if lister == nil {
			fail(w, r, apierrors.NewNotFound(schema.GroupResource{}, r.URL.Path))
			return
		}
		ws, after, _ := strings.Cut(rest, "/")
		if ws != Workspace || hasDotSegment(after) {
			fail(w, r, apierrors.NewNotFound(schema.GroupResource{}, r.URL.Path))
			return
		}
		m := &membership{lister: lister}
		ctx := context.WithValue(r.Context(), contextKey{}, m)
		ctx = clusters.WithResourceFilter(ctx, Resource, func(_ string, obj runtime.Object) bool {
			a, err := meta.Accessor(obj)
			return err == nil && m.has(a.GetName())
		})
		u := *r.URL
		u.Path, u.RawPath = clusters.Prefix+Workspace+"/"+after, ""
		r = r.WithContext(ctx)
		r.URL = &u
		r.RequestURI = u.RequestURI()
		handler.ServeHTTP(w, r)
	})
}

// WithDiscovery narrows discovery through the virtual workspace to
// core.platform-mesh.io accounts, read-only. It must run after
// authentication and authorization.
func WithDiscovery(next http.Handler) http.Handler {
	return discovery.WithReadOnlyNarrowing(next, func(r *http.Request) (discovery.Served, bool, error) {
		if _, ok := from(r.Context()); !ok {
			return nil, false, nil
		}
		return discovery.Served{Resource.Group: {Resource.Resource: true}}, true, nil
	})
}

// Authorizer decides requests through the virtual workspace: discovery,
// and get, list and watch of accounts, for every authenticated user; the
// user's organizations are read here, for the storage's filter. Anything
// else is refused.
type Authorizer struct{}

// Authorize implements authorizer.Authorizer.
func (Authorizer) Authorize(ctx context.Context, attrs authorizer.Attributes) (authorizer.Decision, string, error) {
	m, ok := from(ctx)
	if !ok || strings.HasPrefix(attrs.GetVerb(), "impersonate") {
		// Impersonation is decided as anywhere else; the request is then
		// decided here for the impersonated user.
		return authorizer.DecisionNoOpinion, "", nil
	}
	u := attrs.GetUser()
	if u == nil || !authenticated(u) {
		return authorizer.DecisionDeny, "my organizations are shown to authenticated users only", nil
	}
	if !attrs.IsResourceRequest() {
		if attrs.GetVerb() != "get" {
			return authorizer.DecisionDeny, "the virtual workspace is read-only", nil
		}
		return authorizer.DecisionAllow, "", nil
	}
	if attrs.GetAPIGroup() != Resource.Group || attrs.GetResource() != Resource.Resource || attrs.GetSubresource() != "" {
		return authorizer.DecisionDeny, fmt.Sprintf("only %s are served in the %s virtual workspace", Resource, Name), nil
	}
	switch attrs.GetVerb() {
	case "get", "list", "watch":
	default:
		return authorizer.DecisionDeny, fmt.Sprintf("%s are read-only in the %s virtual workspace", Resource, Name), nil
	}
	if err := m.load(ctx, u); err != nil {
		return authorizer.DecisionDeny, "your organizations cannot be read now", err
	}
	return authorizer.DecisionAllow, "", nil
}

// hasDotSegment reports whether a path has a "." or ".." segment (which
// could lead out of root:orgs once rewritten).
func hasDotSegment(p string) bool {
	for _, seg := range strings.Split(p, "/") {
		if seg == "." || seg == ".." {
			return true
		}
	}
	return false
}

func authenticated(u user.Info) bool {
	for _, g := range u.GetGroups() {
		if g == user.AllAuthenticated {
			return true
		}
	}
	return false
}

// fail answers with err as a Status, as kube-apiserver does.
func fail(w http.ResponseWriter, r *http.Request, err error) {
	responsewriters.ErrorNegotiated(err, builtinapi.Codecs, schema.GroupVersion{}, w, r)
}
