package crd

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/registry/customresource"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/endpoints/handlers"
	"k8s.io/apiserver/pkg/endpoints/handlers/responsewriters"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/klog/v2"

	builtinapi "github.com/meshplane/meshplane/core/internal/apis/builtin"
	"github.com/meshplane/meshplane/core/internal/clusters"
)

// Handler serves custom resources of the request's cluster and hands
// everything else to Next.
type Handler struct {
	Index     *Index
	Builder   *Builder
	Admission admission.Interface
	// Builtin holds the groups served by the built-in registries.
	Builtin map[string]bool
	// BuiltinResource reports whether a built-in registry serves a
	// resource of a Builtin group. Other resources of those groups (a
	// bound services of the core group) are served here when the cluster
	// binds them; the built-in ones always win. Nil: every resource of a
	// Builtin group is built in.
	BuiltinResource   func(gr schema.GroupResource) bool
	MinRequestTimeout time.Duration
	Next              http.Handler

	mu    sync.Mutex
	infos map[types.UID]*servingInfo
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.serve(w, r, h.Next) }

// WithNext returns the handler serving custom resources and handing
// everything else to next (in place of Next).
func (h *Handler) WithNext(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.serve(w, r, next) })
}

func (h *Handler) serve(w http.ResponseWriter, r *http.Request, next http.Handler) {
	ctx := r.Context()
	info, ok := genericapirequest.RequestInfoFrom(ctx)
	if !ok || !info.IsResourceRequest || h.builtin(info) {
		next.ServeHTTP(w, r)
		return
	}
	cluster, _ := clusters.From(ctx)
	var crd *apiextensionsv1.CustomResourceDefinition
	if resource, identity, ok := strings.Cut(info.Resource, ":"); ok {
		// <resource>:<identity hash> names a bound resource on the wildcard.
		if cluster == clusters.Wildcard {
			crd = h.Index.GetByIdentity(resource+"."+info.APIGroup, identity)
		}
	} else {
		crd = h.Index.Get(cluster, info.Resource+"."+info.APIGroup)
		switch {
		case crd == nil || cluster != clusters.Wildcard:
		case crd.Annotations[IdentityAnnotation] != "":
			crd = nil // bound resources need their identity on the wildcard
		case !partialMetadata(r):
			// As kcp: the CRDs of several clusters need not agree on a
			// schema; across clusters only their metadata is served.
			crd = nil
		}
	}
	if crd == nil || !established(crd) || !served(crd, info.APIVersion) {
		next.ServeHTTP(w, r)
		return
	}
	si, err := h.servingInfo(crd)
	if err != nil {
		klog.ErrorS(err, "Serving custom resources", "crd", crd.Name, "cluster", cluster)
		responsewriters.ErrorNegotiated(apierrors.NewInternalError(err), builtinapi.Codecs, schema.GroupVersion{}, w, r)
		return
	}
	namespaced := crd.Spec.Scope == apiextensionsv1.NamespaceScoped
	if !namespaced && info.Namespace != "" {
		next.ServeHTTP(w, r) // cluster-scoped resources have no namespaced paths
		return
	}
	if namespaced && info.Namespace == "" && info.Verb != "list" && info.Verb != "watch" {
		next.ServeHTTP(w, r)
		return
	}
	terminating := crd.DeletionTimestamp != nil
	var handler http.HandlerFunc
	switch info.Subresource {
	case "":
		handler = h.serveResource(si, info, terminating)
	case "status":
		if st := si.statusStorage[info.APIVersion]; st != nil {
			handler = h.serveSubresource(st, si.status[info.APIVersion], info)
		}
	case "scale":
		if st := si.storage[info.APIVersion].Scale; st != nil {
			handler = h.serveSubresource(st, si.scale[info.APIVersion], info)
		}
	}
	if handler == nil {
		responsewriters.ErrorNegotiated(apierrors.NewNotFound(schema.GroupResource{Group: info.APIGroup, Resource: info.Resource + "/" + info.Subresource}, info.Name),
			builtinapi.Codecs, schema.GroupVersion{}, w, r)
		return
	}
	handler(w, r)
}

// builtin reports whether the built-in registries serve the request's
// resource.
func (h *Handler) builtin(info *genericapirequest.RequestInfo) bool {
	if !h.Builtin[info.APIGroup] {
		return false
	}
	if h.BuiltinResource == nil {
		return true
	}
	resource, _, _ := strings.Cut(info.Resource, ":")
	return h.BuiltinResource(schema.GroupResource{Group: info.APIGroup, Resource: resource})
}

var patchTypes = []string{string(types.JSONPatchType), string(types.MergePatchType), string(types.ApplyYAMLPatchType)}

func (h *Handler) serveResource(si *servingInfo, info *genericapirequest.RequestInfo, terminating bool) http.HandlerFunc {
	st := si.storage[info.APIVersion].CustomResource
	scope := si.scopes[info.APIVersion]
	switch info.Verb {
	case "get":
		return handlers.GetResource(st, scope)
	case "list":
		return handlers.ListResource(st, st, scope, false, h.MinRequestTimeout)
	case "watch":
		return handlers.ListResource(st, st, scope, true, h.MinRequestTimeout)
	case "create":
		if terminating {
			return refuse(apierrors.NewMethodNotSupported(scope.Resource.GroupResource(), "create: the CustomResourceDefinition is being deleted"))
		}
		return handlers.CreateResource(st, scope, h.Admission)
	case "update":
		return handlers.UpdateResource(st, scope, h.Admission)
	case "patch":
		return handlers.PatchResource(st, scope, h.Admission, patchTypes)
	case "delete":
		return handlers.DeleteResource(st, true, scope, h.Admission)
	case "deletecollection":
		return handlers.DeleteCollection(st, true, scope, h.Admission)
	}
	return refuse(apierrors.NewMethodNotSupported(scope.Resource.GroupResource(), info.Verb))
}

func (h *Handler) serveSubresource(st any, scope *handlers.RequestScope, info *genericapirequest.RequestInfo) http.HandlerFunc {
	switch s := st.(type) {
	case rest.Patcher:
		switch info.Verb {
		case "get":
			return handlers.GetResource(s, scope)
		case "update":
			return handlers.UpdateResource(s, scope, h.Admission)
		case "patch":
			return handlers.PatchResource(s, scope, h.Admission, patchTypes)
		}
	}
	return refuse(apierrors.NewMethodNotSupported(scope.Resource.GroupResource(), info.Verb))
}

func refuse(err error) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		responsewriters.ErrorNegotiated(err, builtinapi.Codecs, schema.GroupVersion{}, w, r)
	}
}

// servingInfo returns the serving info of crd, building it on first use and
// after every change of the CRD.
func (h *Handler) servingInfo(crd *apiextensionsv1.CustomResourceDefinition) (*servingInfo, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if si, ok := h.infos[crd.UID]; ok && si.crd.ResourceVersion == crd.ResourceVersion {
		return si, nil
	}
	si, err := h.Builder.build(crd, StoragePrefix(crd))
	if err != nil {
		return nil, err
	}
	if h.infos == nil {
		h.infos = map[types.UID]*servingInfo{}
	}
	h.infos[crd.UID] = si
	return si, nil
}

// Forget drops the serving info of a deleted CRD.
func (h *Handler) Forget(uid types.UID) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.infos, uid)
}

func served(crd *apiextensionsv1.CustomResourceDefinition, version string) bool {
	for _, v := range crd.Spec.Versions {
		if v.Name == version {
			return v.Served
		}
	}
	return false
}

// Content is a registry of custom resources.
type Content interface {
	rest.Lister
	rest.CollectionDeleter
}

// NamespacedContents returns the registries of cluster's namespaced custom
// resources, for emptying namespaces.
func (h *Handler) NamespacedContents(cluster string) []Content {
	var out []Content
	for _, crd := range h.Index.List(cluster) {
		if crd.Spec.Scope != apiextensionsv1.NamespaceScoped || !established(crd) {
			continue
		}
		si, err := h.servingInfo(crd)
		if err != nil {
			klog.ErrorS(err, "Serving custom resources", "crd", crd.Name, "cluster", cluster)
			continue
		}
		for _, st := range si.storage {
			out = append(out, st.CustomResource)
			break // every version shares one storage
		}
	}
	return out
}

// DeleteAll deletes every object of crd's resource in cluster (every
// namespace), e.g. when an APIBinding that served it goes.
func (h *Handler) DeleteAll(ctx context.Context, cluster string, crd *apiextensionsv1.CustomResourceDefinition) error {
	si, err := h.servingInfo(crd)
	if err != nil {
		return err
	}
	for _, st := range si.storage {
		return deleteAll(clusters.WithCluster(ctx, cluster), st.CustomResource)
	}
	return nil
}

// Bound returns the resources binding makes cluster serve.
func (i *Index) Bound(cluster, binding string) []*apiextensionsv1.CustomResourceDefinition {
	i.mu.RLock()
	defer i.mu.RUnlock()
	var out []*apiextensionsv1.CustomResourceDefinition
	for _, c := range i.bound[cluster][binding] {
		out = append(out, c)
	}
	return out
}

// Registry returns the registry of crd's objects (every version shares
// it), for in-process controllers such as the garbage collector.
func (h *Handler) Registry(crd *apiextensionsv1.CustomResourceDefinition) (*customresource.REST, error) {
	si, err := h.servingInfo(crd)
	if err != nil {
		return nil, err
	}
	for _, st := range si.storage {
		return st.CustomResource, nil
	}
	return nil, fmt.Errorf("CustomResourceDefinition %s serves no version", crd.Name)
}

// partialMetadata reports whether a request asks for metadata only
// (Accept: ...;as=PartialObjectMetadata[List];g=meta.k8s.io).
func partialMetadata(r *http.Request) bool {
	for _, accept := range r.Header.Values("Accept") {
		if strings.Contains(accept, "as=PartialObjectMetadata") {
			return true
		}
	}
	return false
}
