// Package clusterstore partitions one etcd keyspace into logical clusters.
//
// A registry asks for keys such as /configmaps/<ns>/<name>; the store inserts
// the request's cluster after the resource prefix, giving
// /configmaps/<cluster>/<ns>/<name>, so a cluster's objects form one
// contiguous range and a wildcard list is the resource's whole prefix.
// Every object written is stamped with the kcp.io/cluster annotation.
package clusterstore

import (
	"context"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/apiserver/pkg/storage"

	"github.com/meshplane/meshplane/core/internal/clusters"
)

// New wraps inner so that every key is placed under the cluster of the
// request's context.
func New(inner storage.Interface, resourcePrefix string) storage.Interface {
	return NewForResource(inner, resourcePrefix, schema.GroupResource{})
}

// NewForResource is New for the storage of resource, which also applies
// the request's filter of that resource (clusters.WithResourceFilter).
func NewForResource(inner storage.Interface, resourcePrefix string, resource schema.GroupResource) storage.Interface {
	prefix := "/" + trimSlashes(resourcePrefix)
	return &store{Interface: inner, prefix: prefix, resource: resource}
}

type store struct {
	storage.Interface
	prefix   string
	resource schema.GroupResource
}

// filter returns the request's filter of the store's resource: on the
// wildcard also the filter of every resource (clusters.WithFilter).
func (s *store) filter(ctx context.Context) (clusters.Filter, bool) {
	var keeps []clusters.Filter
	if keep, ok := clusters.FilterFrom(ctx); ok && clusters.IsWildcard(ctx) {
		keeps = append(keeps, keep)
	}
	if s.resource.Resource != "" {
		if keep, ok := clusters.ResourceFilterFrom(ctx, s.resource); ok {
			keeps = append(keeps, keep)
		}
	}
	switch len(keeps) {
	case 0:
		return nil, false
	case 1:
		return keeps[0], true
	}
	return func(cluster string, obj runtime.Object) bool {
		return keeps[0](cluster, obj) && keeps[1](cluster, obj)
	}, true
}

// withSelector adds the request's label selector of the store's resource
// (clusters.WithResourceSelector) to a list or watch in one cluster.
func (s *store) withSelector(ctx context.Context, opts storage.ListOptions) storage.ListOptions {
	cluster, ok := clusters.From(ctx)
	if !ok || cluster == clusters.Wildcard || s.resource.Resource == "" {
		return opts
	}
	sel, ok := clusters.ResourceSelectorFrom(ctx, s.resource, cluster)
	if !ok {
		return opts
	}
	reqs, selectable := sel.Requirements()
	if !selectable || len(reqs) == 0 {
		return opts
	}
	if opts.Predicate.Label == nil {
		opts.Predicate.Label = labels.Everything()
	}
	opts.Predicate.Label = opts.Predicate.Label.Add(reqs...)
	return opts
}

// hidden is the error for an object the request's filter refuses.
func (s *store) hidden(key string) error {
	return apierrors.NewNotFound(s.resource, key[strings.LastIndex(key, "/")+1:])
}

// key maps a registry key to its place inside the request's cluster.
func (s *store) key(ctx context.Context, key string, allowWildcard bool) (string, error) {
	cluster, ok := clusters.From(ctx)
	if !ok {
		return "", apierrors.NewBadRequest("the request names no logical cluster: use /clusters/<name>/")
	}
	if !strings.HasPrefix(key, s.prefix) {
		return "", fmt.Errorf("key %q lacks resource prefix %q", key, s.prefix)
	}
	rest := key[len(s.prefix):]
	if rest != "" && rest[0] != '/' {
		return "", fmt.Errorf("key %q lacks resource prefix %q", key, s.prefix)
	}
	if cluster == clusters.Wildcard {
		if !allowWildcard {
			return "", apierrors.NewBadRequest("only list and watch are supported across all clusters")
		}
		if strings.Trim(rest, "/") != "" {
			return "", apierrors.NewBadRequest("a list or watch across all clusters must span all namespaces")
		}
		return s.prefix, nil
	}
	return s.prefix + "/" + cluster + rest, nil
}

// Versioner is kube's, with 400s for resource versions a client wrote
// that are no numbers (the generic registry asks it about the objects of
// updates and patches).
func (s *store) Versioner() storage.Versioner { return versioner{} }

// checkResourceVersion refuses a resourceVersion that is no number with a
// 400, as lists do; the stores below report it to a get or watch as an
// internal error.
func checkResourceVersion(rv string) error {
	if rv == "" {
		return nil
	}
	if _, err := (storage.APIObjectVersioner{}).ParseResourceVersion(rv); err != nil {
		return apierrors.NewBadRequest(fmt.Sprintf("invalid resource version: %v", err))
	}
	return nil
}

// stamp records the cluster of ctx on obj.
func stamp(ctx context.Context, obj runtime.Object) error {
	cluster, ok := clusters.From(ctx)
	if !ok || cluster == clusters.Wildcard {
		return apierrors.NewBadRequest("objects can only be written inside one logical cluster")
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return err
	}
	ann := m.GetAnnotations()
	if ann[clusters.Annotation] == cluster {
		return nil
	}
	if ann == nil {
		ann = map[string]string{}
	}
	ann[clusters.Annotation] = cluster
	m.SetAnnotations(ann)
	return nil
}

func (s *store) Create(ctx context.Context, key string, obj, out runtime.Object, ttl uint64) error {
	k, err := s.key(ctx, key, false)
	if err != nil {
		return err
	}
	if err := stamp(ctx, obj); err != nil {
		return err
	}
	return s.Interface.Create(ctx, k, obj, out, ttl)
}

func (s *store) Delete(ctx context.Context, key string, out runtime.Object, preconditions *storage.Preconditions,
	validateDeletion storage.ValidateObjectFunc, cachedExistingObject runtime.Object, opts storage.DeleteOptions) error {
	k, err := s.key(ctx, key, false)
	if err != nil {
		return err
	}
	if keep, ok := s.filter(ctx); ok {
		validate := validateDeletion
		validateDeletion = func(ctx context.Context, obj runtime.Object) error {
			if !keep(clusterOf(obj), obj) {
				return s.hidden(key)
			}
			return validate(ctx, obj)
		}
	}
	return s.Interface.Delete(ctx, k, out, preconditions, validateDeletion, cachedExistingObject, opts)
}

func (s *store) Watch(ctx context.Context, key string, opts storage.ListOptions) (watch.Interface, error) {
	k, err := s.key(ctx, key, true)
	if err != nil {
		return nil, err
	}
	if err := checkResourceVersion(opts.ResourceVersion); err != nil {
		return nil, err
	}
	if clusters.IsWildcard(ctx) {
		opts.Recursive = true
	}
	w, err := s.Interface.Watch(ctx, k, s.withSelector(ctx, opts))
	if keep, ok := s.filter(ctx); ok && err == nil {
		return watch.Filter(w, func(e watch.Event) (watch.Event, bool) {
			if e.Type == watch.Bookmark || e.Type == watch.Error {
				return e, true
			}
			obj := e.Object
			if c, ok := obj.(runtime.CacheableObject); ok {
				obj = c.GetObject()
			}
			return e, keep(clusterOf(obj), obj)
		}), nil
	}
	return w, err
}

func (s *store) Get(ctx context.Context, key string, opts storage.GetOptions, objPtr runtime.Object) error {
	k, err := s.key(ctx, key, false)
	if err != nil {
		return err
	}
	if err := checkResourceVersion(opts.ResourceVersion); err != nil {
		return err
	}
	if err := s.Interface.Get(ctx, k, opts, objPtr); err != nil {
		return err
	}
	if keep, ok := s.filter(ctx); ok && !keep(clusterOf(objPtr), objPtr) {
		return s.hidden(key)
	}
	return nil
}

func (s *store) GetList(ctx context.Context, key string, opts storage.ListOptions, listObj runtime.Object) error {
	k, err := s.key(ctx, key, true)
	if err != nil {
		return err
	}
	if clusters.IsWildcard(ctx) {
		opts.Recursive = true
	}
	if err := s.Interface.GetList(ctx, k, s.withSelector(ctx, opts), listObj); err != nil {
		return err
	}
	if keep, ok := s.filter(ctx); ok {
		return filterList(listObj, keep)
	}
	return nil
}

func (s *store) GuaranteedUpdate(ctx context.Context, key string, destination runtime.Object, ignoreNotFound bool,
	preconditions *storage.Preconditions, tryUpdate storage.UpdateFunc, cachedExistingObject runtime.Object) error {
	k, err := s.key(ctx, key, false)
	if err != nil {
		return err
	}
	keep, filtered := s.filter(ctx)
	stamped := func(input runtime.Object, res storage.ResponseMeta) (runtime.Object, *uint64, error) {
		// An object that does not exist yet (a create through an apply) is
		// not filtered: admission checks what the request creates.
		if filtered && res.ResourceVersion != 0 && !keep(clusterOf(input), input) {
			return nil, nil, s.hidden(key)
		}
		out, ttl, err := tryUpdate(input, res)
		if err != nil {
			return nil, nil, err
		}
		if err := stamp(ctx, out); err != nil {
			return nil, nil, err
		}
		return out, ttl, nil
	}
	return s.Interface.GuaranteedUpdate(ctx, k, destination, ignoreNotFound, preconditions, stamped, cachedExistingObject)
}

func trimSlashes(s string) string { return strings.Trim(s, "/") }

// clusterOf returns the cluster an object is stored in.
func clusterOf(obj runtime.Object) string {
	if c, ok := obj.(runtime.CacheableObject); ok {
		obj = c.GetObject()
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return ""
	}
	return m.GetAnnotations()[clusters.Annotation]
}

// filterList drops the items of clusters keep refuses.
func filterList(listObj runtime.Object, keep clusters.Filter) error {
	items, err := meta.ExtractListWithAlloc(listObj)
	if err != nil {
		return err
	}
	kept := items[:0]
	for _, item := range items {
		if keep(clusterOf(item), item) {
			kept = append(kept, item)
		}
	}
	if len(kept) == len(items) {
		return nil
	}
	return meta.SetList(listObj, kept)
}
