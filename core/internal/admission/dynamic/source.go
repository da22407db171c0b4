// Package dynamic is Kubernetes' dynamic admission per logical cluster:
// MutatingWebhookConfigurations, ValidatingWebhookConfigurations,
// ValidatingAdmissionPolicies and MutatingAdmissionPolicies (with their
// bindings) apply to the requests of the cluster that holds them and, as
// in kcp, to requests on an APIExport's resources in every cluster that
// binds the export.
//
// Everything is read from one set of cluster-aware wildcard informers
// (Informers) and, for a hook cluster another shard holds (an export
// bound here from elsewhere), from that shard's replica (Remote); the
// dispatching is k8s.io/apiserver's own (webhook
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
	"fmt"
	"net/http"
	"sort"
	"time"

	apisv1alpha2 "github.com/kcp-dev/sdk/apis/apis/v1alpha2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
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
	remote       Remote
}

// Remote holds the admission objects of the clusters other shards hold.
type Remote interface {
	// Objects returns the objects of resource (an admissionregistration
	// resource) in cluster when another shard holds cluster, nil when
	// this shard does or no shard does, and an error while it cannot
	// tell yet (a replica has not synced).
	Objects(resource, cluster string) ([]any, error)
	// OnChange calls f for every change of a replicated object of
	// resource.
	OnChange(resource string, f func(obj any, deleted bool))
}

// WithRemote makes the source read the hook clusters of other shards
// from r. Call it before building the plugins.
func (s *Source) WithRemote(r Remote) *Source {
	s.remote = r
	return s
}

// waitForRemote bounds how long a request waits for another shard's
// replica before it is refused with 503 (a variable for tests).
var waitForRemote = 5 * time.Second

// objects lists the objects of resource in a hook cluster: those of the
// local informer, else those of the shard that holds the cluster.
func (s *Source) objects(local cache.SharedIndexInformer, resource, cluster string) ([]any, error) {
	if objs := byCluster(local, cluster); len(objs) > 0 || s.remote == nil {
		return objs, nil
	}
	return s.remote.Objects(resource, cluster)
}

// hookObjects is objects for a request: it waits a little for a replica
// that has not synced, then refuses the request with a retryable 503 (a
// hook cluster's admission is never skipped because its shard's objects
// are not here yet).
func (s *Source) hookObjects(ctx context.Context, local cache.SharedIndexInformer, resource, cluster string) ([]any, error) {
	objs, err := s.objects(local, resource, cluster)
	if err == nil {
		return objs, nil
	}
	ctx, cancel := context.WithTimeout(ctx, waitForRemote)
	defer cancel()
	_ = wait.PollUntilContextCancel(ctx, 100*time.Millisecond, false, func(context.Context) (bool, error) {
		objs, err = s.objects(local, resource, cluster)
		return err == nil, nil
	})
	if err == nil {
		return objs, nil
	}
	return nil, notReady(cluster, err)
}

// notReady is the 503 of a request whose hook cluster's objects cannot be
// read yet: clients retry after a second.
func notReady(cluster string, err error) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: http.StatusServiceUnavailable, Reason: metav1.StatusReasonServiceUnavailable,
		Message: fmt.Sprintf("the admission configuration of cluster %s is not available yet: %v", cluster, err),
		Details: &metav1.StatusDetails{RetryAfterSeconds: 1},
	}}
}

// onHookChange calls f for every change of resource in the local informer
// and, with a Remote, in the other shards' replicas.
func (s *Source) onHookChange(local cache.SharedIndexInformer, resource string, f func(obj any, deleted bool)) {
	wildcard.Mirror(local, f)
	if s.remote != nil {
		s.remote.OnChange(resource, f)
	}
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
