package server

import (
	"context"
	"fmt"
	"strings"

	kcpcache "github.com/kcp-dev/apimachinery/v2/pkg/cache"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsapiserver "k8s.io/apiextensions-apiserver/pkg/apiserver"
	"k8s.io/apiextensions-apiserver/pkg/registry/customresourcedefinition"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/registry/rest"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/client-go/tools/cache"

	"github.com/meshplane/meshplane/core/internal/admission/namespacelifecycle"
	builtinapi "github.com/meshplane/meshplane/core/internal/apis/builtin"
	"github.com/meshplane/meshplane/core/internal/apis/builtin/listcache"
	"github.com/meshplane/meshplane/core/internal/clusters"
	"github.com/meshplane/meshplane/core/internal/controllers/namespace"
	"github.com/meshplane/meshplane/core/internal/crd"
	"github.com/meshplane/meshplane/core/internal/registry/builtin"
	"github.com/meshplane/meshplane/core/internal/typeconverter"
)

// namespaceGetter reads namespaces for namespace admission: from the
// namespace informer (the namespace
// controller's, shared), as kube-apiserver's admission reads them from its
// lister, and from the registry when the informer does not have the
// namespace (not synced yet, or created a moment ago). The informer's
// object is shared: callers only read it.
func (p *parts) namespaceGetter() namespacelifecycle.GetNamespace {
	return informerNamespaceGetter(p.informers.of(p.reg.namespaceStore, &corev1.Namespace{}).GetStore(),
		registryNamespaceGetter(p.reg.namespaceStore))
}

// informerNamespaceGetter reads namespaces of the request's cluster from
// store (keyed by kcp's cluster-aware key), and through fallback when
// store does not have one.
func informerNamespaceGetter(store cache.Store, fallback namespacelifecycle.GetNamespace) namespacelifecycle.GetNamespace {
	return func(ctx context.Context, name string) (*corev1.Namespace, error) {
		if cluster, ok := clusters.From(ctx); ok {
			if obj, ok, err := store.GetByKey(kcpcache.ToClusterAwareKey(cluster, "", name)); err == nil && ok {
				if ns, ok := obj.(*corev1.Namespace); ok {
					return ns, nil
				}
			}
		}
		return fallback(ctx, name)
	}
}

// registryNamespaceGetter reads namespaces from the registry (webhook
// namespace selectors fall back to it when their informer misses).
func registryNamespaceGetter(getter rest.Getter) namespacelifecycle.GetNamespace {
	return func(ctx context.Context, name string) (*corev1.Namespace, error) {
		// The watch cache answers almost always; a namespace created a
		// moment ago may not be in it yet, so a miss asks etcd.
		obj, err := getter.Get(ctx, name, &metav1.GetOptions{ResourceVersion: "0"})
		if apierrors.IsNotFound(err) {
			obj, err = getter.Get(ctx, name, &metav1.GetOptions{})
		}
		if err != nil {
			return nil, err
		}
		return obj.(*corev1.Namespace), nil
	}
}

// clusterDeleting tells namespace admission whether the request's logical
// cluster is being deleted.
func (p *parts) clusterDeleting(ctx context.Context) bool {
	cluster, ok := clusters.From(ctx)
	if !ok {
		return false
	}
	lc, ok := p.index.Get(cluster)
	return ok && lc.DeletionTimestamp != nil
}

// installBuiltin installs the built-in groups. A group with a kind that
// server-side apply would misread by reflection is then served again with
// a type converter that reads it correctly (see internal/typeconverter).
func installBuiltin(s *genericapiserver.GenericAPIServer, storage builtin.Storage, settings typeconverter.Settings) error {
	groups := map[string]*genericapiserver.APIGroupInfo{}
	var order []string
	lists := listcache.New(listcache.DefaultLimit) // serialized list items, shared by the groups
	for _, gv := range builtinapi.GroupVersions {
		info, ok := groups[gv.Group]
		if !ok {
			i := genericapiserver.NewDefaultAPIGroupInfo(gv.Group, builtinapi.Scheme, builtinapi.ParameterCodec, builtinapi.Codecs)
			i.NegotiatedSerializer = builtinapi.CodecsFor(gv.Group, i.NegotiatedSerializer, lists) // kcp's kinds: no protobuf
			info = &i
			groups[gv.Group] = info
			order = append(order, gv.Group)
		}
		info.VersionedResourcesStorageMap[gv.Version] = storage[gv]
	}
	for _, g := range order {
		if g == "" {
			if err := s.InstallLegacyAPIGroup(genericapiserver.DefaultLegacyAPIPrefix, groups[g]); err != nil {
				return fmt.Errorf("installing core/v1: %w", err)
			}
			continue
		}
		if err := s.InstallAPIGroup(groups[g]); err != nil {
			return fmt.Errorf("installing %s: %w", g, err)
		}
		if misread(groups[g]) {
			if err := typeconverter.Reinstall(s, groups[g], genericapiserver.APIGroupPrefix, settings); err != nil {
				return fmt.Errorf("installing %s: %w", g, err)
			}
		}
	}
	// The generic server keeps every group's info (its destroy func) and
	// with it the spec its type converter was built from, which shares the
	// generated OpenAPI definitions' schemas: ~2 MiB read by nothing after
	// the install.
	for _, info := range groups {
		info.StaticOpenAPISpec = nil
	}
	return nil
}

// misread tells whether server-side apply would misread a kind of the
// group by reflection.
func misread(info *genericapiserver.APIGroupInfo) bool {
	for _, gv := range info.PrioritizedVersions {
		if len(typeconverter.Affected(info.Scheme, gv)) > 0 {
			return true
		}
	}
	return false
}

// namespacedContents lists the built-in registries of namespaced objects.
func namespacedContents(storage builtin.Storage) []namespace.Content {
	var out []namespace.Content
	for _, byPath := range storage {
		for path, st := range byPath {
			if strings.Contains(path, "/") {
				continue
			}
			scoper, ok := st.(rest.Scoper)
			content, ok2 := st.(namespace.Content)
			if ok && ok2 && scoper.NamespaceScoped() {
				out = append(out, content)
			}
		}
	}
	return out
}

func builtinGroups() map[string]bool {
	out := map[string]bool{apiextensionsv1.GroupName: true}
	for _, gv := range builtinapi.GroupVersions {
		out[gv.Group] = true
	}
	return out
}

// builtinResource reports whether a built-in registry serves gr (any
// version); the apiextensions group serves CRDs only.
func (p *parts) builtinResource(gr schema.GroupResource) bool {
	if gr.Group == apiextensionsv1.GroupName {
		return true
	}
	for gv, byPath := range p.storage {
		if gv.Group != gr.Group {
			continue
		}
		if _, ok := byPath[gr.Resource]; ok {
			return true
		}
	}
	return false
}

// newCRDGroup is the apiextensions.k8s.io group; installing it fills in
// its StaticOpenAPISpec.
func newCRDGroup(crds *customresourcedefinition.REST) *genericapiserver.APIGroupInfo {
	info := genericapiserver.NewDefaultAPIGroupInfo("apiextensions.k8s.io", apiextensionsapiserver.Scheme,
		metav1.ParameterCodec, apiextensionsapiserver.Codecs)
	info.VersionedResourcesStorageMap["v1"] = map[string]rest.Storage{
		"customresourcedefinitions":        crds,
		"customresourcedefinitions/status": customresourcedefinition.NewStatusREST(apiextensionsapiserver.Scheme, crds),
	}
	return &info
}

// crdPrefixes returns the storage prefixes of a cluster's custom resources.
func crdPrefixes(index *crd.Index, cluster string) []string {
	var out []string
	for _, c := range index.List(cluster) {
		out = append(out, crd.StoragePrefix(c))
	}
	return out
}
