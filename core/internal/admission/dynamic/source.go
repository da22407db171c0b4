// Package dynamic is Kubernetes' dynamic admission per logical cluster:
// MutatingWebhookConfigurations, ValidatingWebhookConfigurations,
// ValidatingAdmissionPolicies and MutatingAdmissionPolicies (with their
// bindings) apply to the requests of the cluster that holds them and, as
// in kcp, to requests on an APIExport's resources in every cluster that
// binds the export.
//
// Everything is read from one set of cluster-aware wildcard informers
// (Informers); the dispatching is k8s.io/apiserver's own (webhook
// dispatchers, policy dispatchers, CEL). Per-cluster state exists only
// for clusters that hold hooks, and is built the first time a request
// needs it:
//   - webhooks: one stock webhook plugin per (hook cluster, request
//     cluster), at most maxRequestClusters per hook cluster, whose
//     configuration source lists the hook cluster's configurations
//     (accessors and their compiled match conditions are cached by the
//     plugin until the configuration changes) and whose namespace lister
//     is the request cluster's (namespaceSelector);
//   - policies: one compiled evaluator per policy object version.
package dynamic

import (
	"context"
	"sort"

	apisv1alpha2 "github.com/kcp-dev/sdk/apis/apis/v1alpha2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	kcpcache "github.com/kcp-dev/apimachinery/v2/pkg/cache"

	"github.com/meshplane/meshplane/core/internal/clusters"
	"github.com/meshplane/meshplane/core/internal/registry/wildcard"
)

// Informers are the cluster-aware wildcard informers dynamic admission
// reads. They are shared with the rest of the server and started by it.
type Informers struct {
	MutatingWebhooks, ValidatingWebhooks     cache.SharedIndexInformer
	ValidatingPolicies, ValidatingBindings   cache.SharedIndexInformer
	MutatingPolicies, MutatingPolicyBindings cache.SharedIndexInformer
	Namespaces                               cache.SharedIndexInformer
	APIBindings                              cache.SharedIndexInformer
}

func (i Informers) all() []cache.SharedIndexInformer {
	return []cache.SharedIndexInformer{i.MutatingWebhooks, i.ValidatingWebhooks, i.ValidatingPolicies, i.ValidatingBindings,
		i.MutatingPolicies, i.MutatingPolicyBindings, i.Namespaces, i.APIBindings}
}

// GetNamespace reads a namespace of a cluster from storage: the informer
// may not have seen a namespace created a moment ago.
type GetNamespace func(ctx context.Context, cluster, name string) (*corev1.Namespace, error)

// Source answers, for a request, which clusters' hooks apply and what
// those clusters hold.
type Source struct {
	inf          Informers
	getNamespace GetNamespace
}

// NewSource returns a source over the informers, adding the cluster
// index to those that lack it (before they start).
func NewSource(inf Informers, getNamespace GetNamespace) *Source {
	for _, i := range inf.all() {
		if _, ok := i.GetIndexer().GetIndexers()[kcpcache.ClusterIndexName]; !ok {
			_ = i.AddIndexers(cache.Indexers{kcpcache.ClusterIndexName: kcpcache.ClusterIndexFunc})
		}
	}
	return &Source{inf: inf, getNamespace: getNamespace}
}

// HasSynced reports whether every informer has its first list.
func (s *Source) HasSynced() bool {
	for _, i := range s.inf.all() {
		if !i.HasSynced() {
			return false
		}
	}
	return true
}

// Clusters returns the clusters whose hooks apply to a request on
// resource in cluster: the cluster itself and, for a resource the
// cluster binds from an APIExport, the export's cluster (kcp's rule).
func (s *Source) Clusters(cluster string, resource schema.GroupResource) []string {
	out := []string{cluster}
	if export := s.exportCluster(cluster, resource); export != "" && export != cluster {
		out = append(out, export)
	}
	return out
}

// exportCluster returns the cluster of the APIExport cluster binds
// resource from, or "".
func (s *Source) exportCluster(cluster string, resource schema.GroupResource) string {
	for _, obj := range byCluster(s.inf.APIBindings, cluster) {
		b, ok := obj.(*apisv1alpha2.APIBinding)
		if !ok {
			continue
		}
		for _, r := range b.Status.BoundResources {
			if r.Group == resource.Group && r.Resource == resource.Resource {
				return b.Status.APIExportClusterName
			}
		}
	}
	return ""
}

// byCluster lists the objects of one cluster from an informer.
func byCluster(i cache.SharedIndexInformer, cluster string) []any {
	objs, _ := i.GetIndexer().ByIndex(kcpcache.ClusterIndexName, cluster)
	return objs
}

// sortedByName orders objects of one cluster by name, as kube orders
// webhook configurations and policies.
func sortedByName[T interface{ GetName() string }](objs []any) []T {
	out := make([]T, 0, len(objs))
	for _, o := range objs {
		if t, ok := o.(T); ok {
			out = append(out, t)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].GetName() < out[j].GetName() })
	return out
}

// onClusterChange calls f with the cluster of every object the informer
// adds, updates or deletes.
func onClusterChange(i cache.SharedIndexInformer, f func(cluster string)) {
	wildcard.Mirror(i, func(obj any, _ bool) {
		if o, ok := obj.(interface{ GetAnnotations() map[string]string }); ok {
			f(o.GetAnnotations()[clusters.Annotation])
		}
	})
}

// namespaceLister lists the namespaces of one cluster: from the informer,
// and from storage for a namespace the informer has not seen yet.
type namespaceLister struct {
	s       *Source
	cluster string
}

var _ corelisters.NamespaceLister = namespaceLister{}

func (l namespaceLister) List(selector labels.Selector) ([]*corev1.Namespace, error) {
	var out []*corev1.Namespace
	for _, o := range byCluster(l.s.inf.Namespaces, l.cluster) {
		if ns, ok := o.(*corev1.Namespace); ok && selector.Matches(labels.Set(ns.Labels)) {
			out = append(out, ns)
		}
	}
	return out, nil
}

func (l namespaceLister) Get(name string) (*corev1.Namespace, error) {
	obj, ok, err := l.s.inf.Namespaces.GetIndexer().GetByKey(kcpcache.ToClusterAwareKey(l.cluster, "", name))
	if err != nil {
		return nil, err
	}
	if ok {
		return obj.(*corev1.Namespace), nil
	}
	if l.s.getNamespace == nil {
		return nil, apierrors.NewNotFound(corev1.Resource("namespaces"), name)
	}
	return l.s.getNamespace(context.Background(), l.cluster, name)
}
