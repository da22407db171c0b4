// Package store is the security-operator's Store controller: every Store
// (core.platform-mesh.io/v1alpha1) becomes an OpenFGA store with the
// model composed from its core module, the AuthorizationModels that
// reference it and the resources bound in its organization, and with its
// tuples; see README.md for the steps.
package store

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"
	"time"

	openfgav1 "github.com/openfga/api/proto/openfga/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	mcbuilder "sigs.k8s.io/multicluster-runtime/pkg/builder"
	mccontroller "sigs.k8s.io/multicluster-runtime/pkg/controller"
	mchandler "sigs.k8s.io/multicluster-runtime/pkg/handler"
	mcmanager "sigs.k8s.io/multicluster-runtime/pkg/manager"
	"sigs.k8s.io/multicluster-runtime/pkg/multicluster"
	mcreconcile "sigs.k8s.io/multicluster-runtime/pkg/reconcile"

	corev1alpha1 "github.com/meshplane/meshplane/apis/core/v1alpha1"
	"github.com/meshplane/meshplane/apis/fga"
	"github.com/meshplane/meshplane/operators/fgaclient"
)

// Options configure the controller.
type Options struct {
	// FGA is the OpenFGA server.
	FGA *fgaclient.Client
	// Wildcard lists AuthorizationModels across every workspace that binds
	// the export (a client for <virtual workspace>/clusters/*).
	Wildcard ctrl.Client
	// PathOf and ClusterOf map logical clusters and workspace paths.
	PathOf, ClusterOf func(string) (string, bool)
	// BoundResources lists the resources bound into a workspace, named by
	// logical cluster or path (the organization's: the Store's
	// OrgClusterAnnotationKey, else its workspace path, ":", its name);
	// nil: none.
	BoundResources func(ctx context.Context, workspace string) ([]fga.Resource, error)
	// OrgsCluster returns the logical cluster of the organizations'
	// workspace (root:orgs), from the workspace tree: only Stores there
	// become OpenFGA stores.
	OrgsCluster func(ctx context.Context) (string, error)
	// Workers is the number of Stores reconciled in parallel.
	Workers int
	// Shared points every organization's Store at one OpenFGA store
	// (SharedStoreName) whose model is the union of their models
	// (--organization-stores=shared; docs/authorization.md, Scale).
	Shared bool
}

const callTimeout = 30 * time.Second

// SetupWithManager adds the controller to mgr.
func SetupWithManager(mgr mcmanager.Manager, opts Options) error {
	if opts.FGA == nil || opts.Wildcard == nil || opts.OrgsCluster == nil {
		return errors.New("store controller: FGA, Wildcard and OrgsCluster are required")
	}
	clientOf := func(ctx context.Context, name string) (ctrl.Client, error) {
		cl, err := mgr.GetCluster(ctx, multicluster.ClusterName(name))
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %v", errClusterGone, name, err)
		}
		return cl.GetClient(), nil
	}
	r := newReconciler(clientOf, opts)
	// An AuthorizationModel enqueues the Store it references, in the
	// Store's cluster (by path or name).
	modelToStore := func(_ multicluster.ClusterName, _ cluster.Cluster) handler.TypedEventHandler[ctrl.Object, mcreconcile.Request] {
		return mchandler.TypedEnqueueRequestsFromMapFuncWithClusterPreservation(func(_ context.Context, obj ctrl.Object) []mcreconcile.Request {
			m, ok := obj.(*corev1alpha1.AuthorizationModel)
			if !ok {
				return nil
			}
			r.models.changed()
			ref := m.Spec.StoreRef.Cluster
			if ref == "" {
				ref = m.Spec.StoreRef.Path
			}
			if c, ok := opts.ClusterOf(ref); ok {
				ref = c
			}
			req := mcreconcile.Request{ClusterName: multicluster.ClusterName(ref)}
			req.Name = m.Spec.StoreRef.Name
			return []mcreconcile.Request{req}
		})
	}
	return mcbuilder.ControllerManagedBy(mgr).
		Named("store").
		For(&corev1alpha1.Store{}, mcbuilder.WithPredicates(storeChanged)).
		Watches(&corev1alpha1.AuthorizationModel{}, modelToStore).
		WithOptions(mccontroller.Options{MaxConcurrentReconciles: max(opts.Workers, 1)}).
		Complete(mcreconcile.Func(func(ctx context.Context, req mcreconcile.Request) (reconcile.Result, error) {
			after, err := r.reconcile(ctx, string(req.ClusterName), req.Name)
			return reconcile.Result{RequeueAfter: after}, err
		}))
}

// storeChanged passes a Store's creation and deletion, and the updates
// that change its spec (generation), deletion, annotations, status.storeId
// or that lack the finalizer; not other status-only updates, the
// controller's own writes among them (each cost another reconcile: an
// OpenFGA call and a list of the AuthorizationModels). A store id changed
// by someone else is looked at (and replaced, if not the Store's) at
// once; the rest of a status changed by someone else is repaired at the
// next resync.
var storeChanged = predicate.Funcs{
	UpdateFunc: func(e event.UpdateEvent) bool {
		o, n := e.ObjectOld, e.ObjectNew
		if o == nil || n == nil {
			return true
		}
		os, oOK := o.(*corev1alpha1.Store)
		ns, nOK := n.(*corev1alpha1.Store)
		return !oOK || !nOK || os.Status.StoreID != ns.Status.StoreID ||
			o.GetGeneration() != n.GetGeneration() ||
			!equality.Semantic.DeepEqual(o.GetDeletionTimestamp(), n.GetDeletionTimestamp()) ||
			!maps.Equal(o.GetAnnotations(), n.GetAnnotations()) ||
			!controllerutil.ContainsFinalizer(n, Finalizer)
	},
}

func newReconciler(clientOf func(ctx context.Context, cluster string) (ctrl.Client, error), opts Options) *reconciler {
	f := opts.FGA
	models := &modelList{wildcard: opts.Wildcard}
	listStores := func(ctx context.Context, name string) ([]string, error) {
		stores, err := f.ListStores(ctx)
		if err != nil {
			return nil, err
		}
		var ids []string
		for _, s := range stores {
			if s.Name == name {
				ids = append(ids, s.ID)
			}
		}
		return ids, nil
	}
	var bound func(ctx context.Context, st *state) ([]fga.Resource, error)
	if opts.BoundResources != nil {
		bound = func(ctx context.Context, st *state) ([]fga.Resource, error) {
			if c := st.store.Annotations[corev1alpha1.OrgClusterAnnotationKey]; c != "" {
				return opts.BoundResources(ctx, c)
			}
			if st.path == "" {
				return nil, fmt.Errorf("the organization workspace of Store %s is not known yet", st.store.Name)
			}
			return opts.BoundResources(ctx, st.path+":"+st.store.Name)
		}
	}
	updateModel := func(ctx context.Context, cluster string, m *corev1alpha1.AuthorizationModel) error {
		cl, err := clientOf(ctx, cluster)
		if err != nil {
			return err
		}
		ctx, cancel := context.WithTimeout(ctx, callTimeout)
		defer cancel()
		return cl.Status().Update(ctx, m)
	}
	mig := &migrator{creator: accountCreator(clientOf)}
	writeModel := func(ctx context.Context, storeID, currentID string, m *openfgav1.AuthorizationModel) (string, bool, error) {
		return f.WriteModelIfChanged(ctx, storeID, currentID, m)
	}
	var shared *sharedStore
	if opts.Shared {
		shared = &sharedStore{
			listStores: listStores, createStore: f.CreateStore, writeModel: writeModel, write: f.Write,
			readAll: func(ctx context.Context, id string) ([]corev1alpha1.Tuple, error) { return f.Read(ctx, id, "") },
			latestModel: func(ctx context.Context, id string) (*openfgav1.AuthorizationModel, error) {
				latest, err := f.LatestModelID(ctx, id)
				if err != nil || latest == "" {
					return nil, err
				}
				return f.Model(ctx, id, latest)
			},
		}
		writeModel = func(ctx context.Context, _, _ string, m *openfgav1.AuthorizationModel) (string, bool, error) {
			id, err := shared.grow(ctx, m)
			return id, err == nil, err
		}
	}
	return &reconciler{
		models: models,
		steps: []step{
			&storeStep{storeName: f.StoreName, createStore: f.CreateStore, listStores: listStores, shared: shared},
			&modelStep{
				listModels:     models.list,
				boundResources: bound,
				writeModel:     writeModel,
				updateModel:    updateModel,
				shared:         opts.Shared,
			},
			&migrateStep{read: f.Read, write: f.Write, migrator: mig},
			&tuplesStep{write: f.Write, updateModel: updateModel, migrator: mig,
				owners: &ownership{creator: accountCreator(clientOf)}, shared: opts.Shared},
		},
		deletion: &deletionStep{storeName: f.StoreName, listStores: listStores, write: f.Write, deleteStore: f.DeleteStore, shared: shared,
			readTuples: func(ctx context.Context, id string) ([]corev1alpha1.Tuple, error) { return f.Read(ctx, id, "") }},
		getStore: func(ctx context.Context, cluster, name string) (*corev1alpha1.Store, error) {
			cl, err := clientOf(ctx, cluster)
			if err != nil {
				return nil, err
			}
			ctx, cancel := context.WithTimeout(ctx, callTimeout)
			defer cancel()
			st := &corev1alpha1.Store{}
			return st, cl.Get(ctx, ctrl.ObjectKey{Name: name}, st)
		},
		updateStore: func(ctx context.Context, cluster string, st *corev1alpha1.Store) error {
			cl, err := clientOf(ctx, cluster)
			if err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(ctx, callTimeout)
			defer cancel()
			return cl.Update(ctx, st)
		},
		updateStatus: func(ctx context.Context, cluster string, st *corev1alpha1.Store) error {
			cl, err := clientOf(ctx, cluster)
			if err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(ctx, callTimeout)
			defer cancel()
			return cl.Status().Update(ctx, st)
		},
		pathOf:      opts.PathOf,
		clusterOf:   opts.ClusterOf,
		orgsCluster: opts.OrgsCluster,
	}
}

// WildcardConfig points cfg (the export's virtual workspace) at all of its
// clusters.
func WildcardConfig(vw *rest.Config) *rest.Config {
	c := rest.CopyConfig(vw)
	c.Host = vw.Host + "/clusters/*"
	return c
}

// modelList lists the AuthorizationModels of every workspace (one list
// request) and shares the answer between reconciles until an
// AuthorizationModel changes or listFor passes: every Store is looked at
// each resync, and each used to list them all again.
type modelList struct {
	wildcard ctrl.Client

	mu    sync.Mutex
	gen   uint64
	at    time.Time
	atGen uint64
	items []corev1alpha1.AuthorizationModel
}

// listFor is how long a list is shared at most (models of workspaces not
// engaged yet send no event here).
const listFor = 20 * time.Second

// changed is called for every AuthorizationModel event.
func (l *modelList) changed() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.gen++
}

// list returns a copy of each AuthorizationModel keep accepts (only
// those are copied: a Store's reconcile wants its own few of them all).
func (l *modelList) list(ctx context.Context, keep func(*corev1alpha1.AuthorizationModel) bool) ([]corev1alpha1.AuthorizationModel, error) {
	l.mu.Lock()
	if l.items != nil && l.atGen == l.gen && time.Since(l.at) < listFor {
		out := copyModels(l.items, keep)
		l.mu.Unlock()
		return out, nil
	}
	gen := l.gen
	l.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	var list corev1alpha1.AuthorizationModelList
	if err := l.wildcard.List(ctx, &list); err != nil {
		return nil, err
	}
	items := list.Items
	if items == nil {
		items = []corev1alpha1.AuthorizationModel{}
	}
	l.mu.Lock()
	// Kept only if nothing changed while listing.
	if l.gen == gen {
		l.items, l.at, l.atGen = items, time.Now(), gen
	}
	l.mu.Unlock()
	return copyModels(items, keep), nil
}

// copyModels copies the models of in that keep accepts.
func copyModels(in []corev1alpha1.AuthorizationModel, keep func(*corev1alpha1.AuthorizationModel) bool) []corev1alpha1.AuthorizationModel {
	var out []corev1alpha1.AuthorizationModel
	for i := range in {
		if keep(&in[i]) {
			out = append(out, *in[i].DeepCopy())
		}
	}
	return out
}
