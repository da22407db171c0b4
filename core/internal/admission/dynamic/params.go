package dynamic

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/meshplane/meshplane/core/internal/clusters"
)

// ParamStorage is a registry policy params are read from.
type ParamStorage interface {
	rest.Storage
	rest.Getter
	rest.Lister
	rest.Scoper
}

// StorageParams returns the Params of the given registries, by kind:
// params are read from storage (its watch cache) in the policy's cluster
// when a request needs them, so no informer per param kind or cluster
// exists.
func StorageParams(byKind map[schema.GroupVersionKind]ParamStorage) Params {
	return func(cluster string, kind schema.GroupVersionKind) (cache.GenericLister, bool, bool) {
		st, ok := byKind[kind]
		if !ok {
			return nil, false, false
		}
		return storageLister{st: st, cluster: cluster}, st.NamespaceScoped(), true
	}
}

// storageLister lists and gets objects of one cluster (and namespace).
type storageLister struct {
	st        ParamStorage
	cluster   string
	namespace string
}

var _ cache.GenericLister = storageLister{}

func (l storageLister) ctx() context.Context {
	ctx := clusters.WithCluster(context.Background(), l.cluster)
	return genericapirequest.WithNamespace(ctx, l.namespace)
}

func (l storageLister) List(selector labels.Selector) ([]runtime.Object, error) {
	list, err := l.st.List(l.ctx(), &metainternalversion.ListOptions{LabelSelector: selector, ResourceVersion: "0"})
	if err != nil {
		return nil, err
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return nil, err
	}
	for i := range items {
		items[i] = unwrap(items[i])
	}
	return items, nil
}

func (l storageLister) Get(name string) (runtime.Object, error) {
	obj, err := l.st.Get(l.ctx(), name, &metav1.GetOptions{ResourceVersion: "0"})
	if apierrors.IsNotFound(err) {
		// The watch cache may not have an object created a moment ago.
		obj, err = l.st.Get(l.ctx(), name, &metav1.GetOptions{})
	}
	if err != nil {
		return nil, err
	}
	return unwrap(obj), nil
}

func (l storageLister) ByNamespace(namespace string) cache.GenericNamespaceLister {
	l.namespace = namespace
	return l
}

func unwrap(obj runtime.Object) runtime.Object {
	if c, ok := obj.(runtime.CacheableObject); ok {
		return c.GetObject()
	}
	return obj
}
