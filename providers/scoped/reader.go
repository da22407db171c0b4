package scoped

import (
	"context"
	"fmt"
	"reflect"
	"slices"

	kcpcache "github.com/kcp-dev/apimachinery/v2/pkg/cache"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/selection"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// StoreFunc returns the store of the wildcard informer of obj's kind
// (obj may be a list), the kind and whether it is namespaced or
// cluster-scoped (meta.RESTScopeNameRoot).
type StoreFunc func(obj runtime.Object) (toolscache.Indexer, schema.GroupVersionKind, meta.RESTScopeName, error)

// Reader reads one logical cluster's objects from the stores of wildcard
// informers, through their kcp cluster indexes: no request, no copy of the
// store per workspace. Objects handed out are deep copies.
type Reader struct {
	store   StoreFunc
	cluster string
}

var _ client.Reader = &Reader{}

// NewReader returns the reader of cluster's objects in store.
func NewReader(store StoreFunc, cluster string) *Reader {
	return &Reader{store: store, cluster: cluster}
}

// Get copies the object named key into obj, or returns a NotFound error.
func (r *Reader) Get(_ context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	indexer, gvk, scope, err := r.store(obj)
	if err != nil {
		return err
	}
	ns := key.Namespace
	if scope == meta.RESTScopeNameRoot {
		ns = ""
	}
	item, ok, err := indexer.GetByKey(kcpcache.ToClusterAwareKey(r.cluster, ns, key.Name))
	if err != nil {
		return err
	}
	if !ok {
		return apierrors.NewNotFound(schema.GroupResource{Group: gvk.Group, Resource: gvk.Kind}, key.Name)
	}
	stored, ok := item.(runtime.Object)
	if !ok {
		return fmt.Errorf("the store of %s holds a %T", gvk.Kind, item)
	}
	var o client.GetOptions
	o.ApplyOptions(opts)
	shared := o.UnsafeDisableDeepCopy != nil && *o.UnsafeDisableDeepCopy
	if !shared {
		stored = stored.DeepCopyObject()
	}
	dst, src := reflect.ValueOf(obj), reflect.ValueOf(stored)
	if !src.Type().AssignableTo(dst.Type()) {
		return fmt.Errorf("the store of %s holds %s, not the %s asked for", gvk.Kind, src.Type(), dst.Type())
	}
	dst.Elem().Set(src.Elem())
	if !shared {
		obj.GetObjectKind().SetGroupVersionKind(gvk)
	}
	return nil
}

// List copies the cluster's objects that match opts into list: in one
// namespace or all, by labels, and by exact field matches on fields
// indexed with IndexField of the wildcard cache (which keys them by
// cluster). Limit is honoured; Continue is refused.
func (r *Reader) List(_ context.Context, list client.ObjectList, opts ...client.ListOption) error {
	var o client.ListOptions
	o.ApplyOptions(opts)
	if o.Continue != "" {
		return fmt.Errorf("listing from the cache: continue is not supported")
	}
	indexer, gvk, scope, err := r.store(list)
	if err != nil {
		return err
	}
	ns := o.Namespace
	if scope == meta.RESTScopeNameRoot {
		ns = ""
	}
	var items []any
	switch {
	case o.FieldSelector != nil && !o.FieldSelector.Empty():
		items, err = r.byFields(indexer, o.FieldSelector, ns)
	case ns != "":
		items, err = indexer.ByIndex(kcpcache.ClusterAndNamespaceIndexName, r.cluster+"/"+ns)
	default:
		items, err = indexer.ByIndex(kcpcache.ClusterIndexName, r.cluster)
	}
	if err != nil {
		return err
	}
	shared := o.UnsafeDisableDeepCopy != nil && *o.UnsafeDisableDeepCopy
	out := make([]runtime.Object, 0, len(items))
	for _, item := range items {
		if o.Limit > 0 && int64(len(out)) >= o.Limit {
			break
		}
		stored, ok := item.(runtime.Object)
		if !ok {
			return fmt.Errorf("the store of %s holds a %T", gvk.Kind, item)
		}
		if o.LabelSelector != nil {
			m, err := meta.Accessor(stored)
			if err != nil {
				return err
			}
			if !o.LabelSelector.Matches(labels.Set(m.GetLabels())) {
				continue
			}
		}
		if !shared {
			stored = stored.DeepCopyObject()
			stored.GetObjectKind().SetGroupVersionKind(gvk)
		}
		out = append(out, stored)
	}
	return meta.SetList(list, out)
}

// byFields answers an exact field selector from the field indexes: the
// first requirement picks the objects, the others filter them. The keys
// are those controller-runtime's informer cache gives a field index whose
// values the wildcard cache prefixed with the cluster:
// <namespace or __all_namespaces>/<cluster>/<value>.
func (r *Reader) byFields(indexer toolscache.Indexer, sel fields.Selector, ns string) ([]any, error) {
	reqs := sel.Requirements()
	for _, req := range reqs {
		if req.Operator != selection.Equals && req.Operator != selection.DoubleEquals {
			return nil, fmt.Errorf("listing from the cache: field selector %q is not an exact match", sel)
		}
	}
	scope := ns
	if scope == "" {
		scope = "__all_namespaces"
	}
	key := func(value string) string { return scope + "/" + r.cluster + "/" + value }
	items, err := indexer.ByIndex("field:"+reqs[0].Field, key(reqs[0].Value))
	if err != nil {
		return nil, err
	}
	indexers := indexer.GetIndexers()
	for _, req := range reqs[1:] {
		index, ok := indexers["field:"+req.Field]
		if !ok {
			return nil, fmt.Errorf("listing from the cache: field %s is not indexed", req.Field)
		}
		want := key(req.Value)
		items = slices.DeleteFunc(items, func(item any) bool {
			vals, err := index(item)
			return err != nil || !slices.Contains(vals, want)
		})
	}
	return items, nil
}
