package builtin

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/apiserver/pkg/registry/generic"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/storage/names"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	builtinapi "github.com/meshplane/meshplane/core/internal/apis/builtin"
)

// Storage maps group version -> resource path -> REST storage.
type Storage map[schema.GroupVersion]map[string]rest.Storage

func (s Storage) add(gv schema.GroupVersion, path string, st rest.Storage) {
	if s[gv] == nil {
		s[gv] = map[string]rest.Storage{}
	}
	s[gv][path] = st
}

// StoragePrefixes lists resources stored under a prefix of their own.
func StoragePrefixes() map[schema.GroupResource]string {
	out := map[schema.GroupResource]string{}
	for _, r := range resources {
		if r.storagePrefix != "" {
			out[r.gv.WithResource(r.plural).GroupResource()] = r.storagePrefix
		}
	}
	return out
}

// StorageVersions lists resources stored in a version other than their
// group's preferred one (apis.kcp.io kinds that exist only in v1alpha1).
func StorageVersions() map[schema.GroupResource]schema.GroupVersion {
	out := map[schema.GroupResource]schema.GroupVersion{}
	for _, r := range resources {
		out[r.gv.WithResource(r.plural).GroupResource()] = r.gv
	}
	return out
}

// NewStorage builds the registries of every built-in resource that keeps
// objects (reviews are added by the caller, which owns authn and authz).
func NewStorage(opts generic.RESTOptionsGetter) (Storage, error) {
	out := Storage{}
	for _, r := range resources {
		store, st, err := newStore(r, opts)
		if err != nil {
			return nil, err
		}
		for _, gv := range append([]schema.GroupVersion{r.gv}, r.alsoIn...) {
			out.add(gv, r.plural, &named{Store: store, shortNames: r.shortNames, categories: r.categories,
				filterList: r.filterList, filterWatch: r.filterWatch})
			if r.hasStatus {
				status := newStatus(store, st.statusStrategy())
				status.rebase = r.rebaseStatus
				out.add(gv, r.plural+"/status", status)
				for _, sub := range r.extraStatus {
					out.add(gv, r.plural+"/"+sub, newStatus(store, st.statusStrategy()))
				}
			}
		}
	}
	// One Event store, two APIs, as on Kubernetes.
	out.add(eventsv1.SchemeGroupVersion, "events", newEventsREST(out[corev1.SchemeGroupVersion]["events"].(*named).Store))
	ns, err := newNamespaceStorage(opts)
	if err != nil {
		return nil, err
	}
	for path, st := range ns {
		out.add(schema.GroupVersion{Version: "v1"}, path, st)
	}
	return out, nil
}

func newStore(r resource, opts generic.RESTOptionsGetter) (*genericregistry.Store, *strategy, error) {
	s := &strategy{
		ObjectTyper:    builtinapi.Scheme,
		NameGenerator:  names.SimpleNameGenerator,
		namespaced:     r.namespaced,
		hasStatus:      r.hasStatus,
		statusOnCreate: r.statusOnCreate,
		nameFn:         r.nameFn,
		defaults:       r.defaults,
		validate:       r.validate,
		validateSpec:   r.validateSpec,
		onCreate:       r.onCreate,
		validateUpdate: r.validateUpdate,
		apiVersion:     r.gv.String(),
	}
	gr := r.gv.WithResource(r.plural).GroupResource()
	store := &genericregistry.Store{
		NewFunc:                   r.newFunc,
		NewListFunc:               r.newList,
		DefaultQualifiedResource:  gr,
		SingularQualifiedResource: r.gv.WithResource(r.singular).GroupResource(),
		CreateStrategy:            s,
		UpdateStrategy:            s,
		DeleteStrategy:            s,
		ResetFieldsStrategy:       s,
		TableConvertor:            table{columns: r.columns},
	}
	if err := store.CompleteWithOptions(&generic.StoreOptions{RESTOptions: opts, AttrFunc: getAttrs(r.fields)}); err != nil {
		return nil, nil, fmt.Errorf("registry for %s: %w", gr, err)
	}
	return store, s, nil
}

// named adds short names and categories to a store, for discovery, and
// the resource's list and watch filters.
type named struct {
	*genericregistry.Store
	shortNames  []string
	categories  []string
	filterList  func(ctx context.Context, list runtime.Object) (runtime.Object, error)
	filterWatch func(ctx context.Context, w watch.Interface) watch.Interface
}

// List implements rest.Lister, through the resource's filter.
func (n *named) List(ctx context.Context, opts *metainternalversion.ListOptions) (runtime.Object, error) {
	out, err := n.Store.List(ctx, opts)
	if err != nil || n.filterList == nil {
		return out, err
	}
	return n.filterList(ctx, out)
}

// Watch implements rest.Watcher, through the resource's filter.
func (n *named) Watch(ctx context.Context, opts *metainternalversion.ListOptions) (watch.Interface, error) {
	w, err := n.Store.Watch(ctx, opts)
	if err != nil || n.filterWatch == nil {
		return w, err
	}
	return n.filterWatch(ctx, w), nil
}

func (n *named) ShortNames() []string { return n.shortNames }
func (n *named) Categories() []string { return n.categories }

var (
	_ rest.ShortNamesProvider = &named{}
	_ rest.CategoriesProvider = &named{}
)

// statusREST serves a status-like subresource: get, and updates that
// change only status.
type statusREST struct {
	store *genericregistry.Store
	// rebase: see resource.rebaseStatus; nil for most kinds.
	rebase func(ctx context.Context, current, updated runtime.Object) runtime.Object
}

func newStatus(store *genericregistry.Store, s *strategy) *statusREST {
	c := *store
	c.UpdateStrategy = s
	c.ResetFieldsStrategy = s
	return &statusREST{store: &c}
}

func (r *statusREST) New() runtime.Object { return r.store.New() }
func (r *statusREST) Destroy()            {}

func (r *statusREST) Get(ctx context.Context, name string, options *metav1.GetOptions) (runtime.Object, error) {
	return r.store.Get(ctx, name, options)
}

func (r *statusREST) Update(ctx context.Context, name string, objInfo rest.UpdatedObjectInfo, createValidation rest.ValidateObjectFunc,
	updateValidation rest.ValidateObjectUpdateFunc, forceAllowCreate bool, options *metav1.UpdateOptions) (runtime.Object, bool, error) {
	if r.rebase != nil {
		objInfo = rebasedInfo{UpdatedObjectInfo: objInfo, rebase: r.rebase}
	}
	// Subresources never create.
	return r.store.Update(ctx, name, objInfo, createValidation, updateValidation, false, options)
}

// rebasedInfo hands the storage the updated object as rebase makes it
// from the stored one (before the storage compares resourceVersions).
type rebasedInfo struct {
	rest.UpdatedObjectInfo
	rebase func(ctx context.Context, current, updated runtime.Object) runtime.Object
}

func (i rebasedInfo) UpdatedObject(ctx context.Context, current runtime.Object) (runtime.Object, error) {
	updated, err := i.UpdatedObjectInfo.UpdatedObject(ctx, current)
	if err != nil {
		return updated, err
	}
	return i.rebase(ctx, current, updated), nil
}

func (r *statusREST) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return r.store.GetResetFields()
}

func (r *statusREST) ConvertToTable(ctx context.Context, obj runtime.Object, opts runtime.Object) (*metav1.Table, error) {
	return r.store.ConvertToTable(ctx, obj, opts)
}

var _ rest.Patcher = &statusREST{}
