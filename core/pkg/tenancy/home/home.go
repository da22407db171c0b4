// Package home serves kcp's home workspaces: GET
// /clusters/root/apis/tenancy.kcp.io/v1alpha1/workspaces/~ returns the
// caller's home workspace (path user:<name>, type root:home), creating it
// on first use and answering 429 with Retry-After while it is not ready.
package home

import (
	"context"
	"net/http"
	"strconv"
	"strings"

	corev1alpha1 "github.com/kcp-dev/sdk/apis/core/v1alpha1"
	tenancyv1alpha1 "github.com/kcp-dev/sdk/apis/tenancy/v1alpha1"
	authenticationv1 "k8s.io/api/authentication/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/endpoints/handlers/responsewriters"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"

	"github.com/meshplane/meshplane/core/pkg/clusters"
	"github.com/meshplane/meshplane/core/pkg/reconciler/client"
	"github.com/meshplane/meshplane/core/pkg/tenancy"
)

// Path is the request path (inside root) of the home workspace.
const Path = "/apis/tenancy.kcp.io/v1alpha1/workspaces/~"

// Handler answers home workspace requests and passes the rest to Next.
type Handler struct {
	Clients     tenancy.Clients
	Bindings    client.Writer[*rbacv1.ClusterRoleBinding]
	Index       *tenancy.Index
	Types       *tenancy.Types
	ExternalURL string
	Codecs      runtime.NegotiatedSerializer
	Next        http.Handler
}

// IsHomeRequest reports whether a request asks for the caller's home.
func IsHomeRequest(ctx context.Context, a authorizer.Attributes) bool {
	cluster, _ := clusters.From(ctx)
	return cluster == clusters.Root && a.IsResourceRequest() && a.GetVerb() == "get" &&
		a.GetAPIGroup() == tenancyv1alpha1.SchemeGroupVersion.Group && a.GetResource() == "workspaces" && a.GetName() == "~"
}

// Authorizer lets every authenticated user ask for their home.
func Authorizer(ctx context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	if IsHomeRequest(ctx, a) && a.GetUser() != nil && a.GetUser().GetName() != "system:anonymous" {
		return authorizer.DecisionAllow, "", nil
	}
	return authorizer.DecisionNoOpinion, "", nil
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	cluster, _ := clusters.From(r.Context())
	if cluster != clusters.Root || r.Method != http.MethodGet || strings.TrimSuffix(r.URL.Path, "/") != Path {
		h.Next.ServeHTTP(w, r)
		return
	}
	u, ok := genericapirequest.UserFrom(r.Context())
	if !ok {
		h.fail(w, r, apierrors.NewUnauthorized("no user"))
		return
	}
	ws, ready, err := h.ensure(r.Context(), &authenticationv1.UserInfo{Username: u.GetName(), UID: u.GetUID(), Groups: u.GetGroups()})
	if err != nil {
		h.fail(w, r, err)
		return
	}
	if !ready {
		w.Header().Set("Retry-After", strconv.Itoa(1))
		h.fail(w, r, apierrors.NewTooManyRequests("home workspace is being created", 1))
		return
	}
	responsewriters.WriteObjectNegotiated(h.Codecs, negotiationRestrictions{}, tenancyv1alpha1.SchemeGroupVersion, w, r, http.StatusOK, ws, false)
}

func (h *Handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	responsewriters.ErrorNegotiated(err, h.Codecs, schema.GroupVersion{}, w, r)
}

// ensure creates the home's logical cluster if needed and returns the
// Workspace describing it.
func (h *Handler) ensure(ctx context.Context, owner *authenticationv1.UserInfo) (*tenancyv1alpha1.Workspace, bool, error) {
	cluster, path := tenancy.HomeClusterName(owner.Username), tenancy.HomePath(owner.Username)
	url := h.ExternalURL + "/clusters/" + path
	lc, err := h.Clients.LogicalClusters.Get(ctx, cluster, "", corev1alpha1.LogicalClusterName)
	if apierrors.IsNotFound(err) {
		t, err := h.Types.Resolve(ctx, tenancyv1alpha1.WorkspaceTypeReference{Name: "home", Path: clusters.Root}, "")
		if err != nil {
			return nil, false, err
		}
		aliases, err := h.Types.Aliases(ctx, t)
		if err != nil {
			return nil, false, err
		}
		inits, terms := tenancy.Lifecycle(aliases)
		if err := tenancy.CreateLogicalCluster(ctx, h.Clients.LogicalClusters, cluster, path, t.ID(), url, owner, inits, terms, nil); err != nil {
			return nil, false, err
		}
		if err := tenancy.EnsureAdmin(ctx, h.Bindings, cluster, owner); err != nil {
			return nil, false, err
		}
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	ws := &tenancyv1alpha1.Workspace{
		ObjectMeta: metav1.ObjectMeta{Name: owner.Username, CreationTimestamp: lc.CreationTimestamp, UID: lc.UID,
			Annotations: map[string]string{clusters.Annotation: clusters.Root}},
		Spec: tenancyv1alpha1.WorkspaceSpec{Cluster: cluster, URL: url,
			Type: &tenancyv1alpha1.WorkspaceTypeReference{Name: "home", Path: clusters.Root}},
		Status: tenancyv1alpha1.WorkspaceStatus{Phase: lc.Status.Phase, Initializers: lc.Status.Initializers},
	}
	return ws, lc.Status.Phase == corev1alpha1.LogicalClusterPhaseReady, nil
}

type negotiationRestrictions struct{}

func (negotiationRestrictions) AllowsMediaTypeTransform(mimeType, mimeSubType string, target *schema.GroupVersionKind) bool {
	return target == nil
}
func (negotiationRestrictions) AllowsServerVersion(string) bool  { return false }
func (negotiationRestrictions) AllowsStreamSchema(s string) bool { return s == "watch" }
