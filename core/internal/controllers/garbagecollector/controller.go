// Package garbagecollector deletes objects whose owners are gone, in
// every logical cluster, the work kube's garbage collector does: one
// controller for all clusters, fed by one wildcard watch per resource
// type (built-in, custom and bound), with dependents indexed by
// (cluster, owner UID). An ownerReference never reaches out of its
// object's logical cluster.
//
// Reconcile steps for an object, by its state:
//  1. being deleted with the "orphan" finalizer (reconcile_orphan.go):
//     remove the ownerReferences to it from its dependents, then the
//     finalizer;
//  2. being deleted with the "foregroundDeletion" finalizer
//     (reconcile_foreground.go): have its dependents deleted, wait until
//     none with blockOwnerDeletion is left, then remove the finalizer;
//  3. alive with ownerReferences (reconcile_owners.go): verify each owner
//     with a live read; if none is left alive, delete the object (in the
//     foreground when an owner waits for it, else as its own finalizers
//     ask); if some are, drop the references to the absent ones. An owner
//     kept that no watch covers (its kind not watched in its cluster, or
//     not served there yet) is read again a minute later, as kube reads
//     again the "virtual" owners its informers have not observed.
//
// Steps 1 and 2 wait until every watch has listed once: before, the
// dependents index may be incomplete.
//
// A resource type is watched from when a holder (the built-in types, or
// a logical cluster serving the type) needs it; an owner of a type
// created and deleted before its watch started is never seen deleted.
// Every list of a source catches up (see replace): owners of its kind,
// in the clusters it serves, that dependents name but the list lacks are
// verified again through their dependents, each with a live read, as kube's collector verifies
// the "virtual" owners it has not observed.
package garbagecollector

import (
	"context"
	"slices"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apiserver/pkg/registry/rest"

	"github.com/meshplane/meshplane/core/internal/reconciler/runner"
	"github.com/meshplane/meshplane/core/internal/registry/local"
)

// Resource is a registry the collector reads, updates and deletes through.
type Resource interface {
	rest.Getter
	rest.Updater
	rest.GracefulDeleter
}

// Kind is what the collector needs to know of a kind in one cluster.
type Kind struct {
	Resource   Resource
	Namespaced bool
	// Source is the ID of the source whose watch sees the kind's objects
	// in that cluster.
	Source string
}

// Controller is the garbage collector.
type Controller struct {
	// Sources lists, by ID, the resource types holder needs watched, each
	// with how to make its source when no holder needed it yet. Holder
	// Builtin is asked at start, any holder again on Refresh(holder); a
	// type is watched while some holder needs it.
	Sources func(holder string) map[string]MakeSource
	// Lookup resolves a kind in a cluster; false if the cluster serves no
	// such kind.
	Lookup func(cluster string, gk schema.GroupKind) (Kind, bool)
	// Changes, when set, is told of every change the watches see (the
	// quota controller recounts from it): one feed of object changes for
	// all clusters instead of a second set of watches.
	Changes func(cluster string, gr schema.GroupResource, namespace string, deleted bool)
	// InvalidOwner, when set, records a warning about an owner reference
	// of obj that cannot resolve (kube's OwnerRefInvalidNamespace event),
	// with kube's message.
	InvalidOwner func(ctx context.Context, cluster string, obj runtime.Object, ref metav1.OwnerReference, message string) error

	graph    *graph
	gone     goneOwners
	watches  watches
	runner   *runner.Runner
	add      func(runner.Key) // the runner's Add
	orphan   orphanStep
	fg       foregroundStep
	ownersSt ownersStep

	dirtyMu sync.Mutex
	dirty   map[string]bool // holders to ask Sources again
	refresh chan struct{}
}

// Builtin is the holder of the built-in types (no logical cluster has
// that name: it is no URL path segment).
const Builtin = "/builtin"

// workers reconcile in parallel: mostly waiting on etcd, so more than
// the cores.
const workers = 8

// New returns the collector.
func New(sources func(holder string) map[string]MakeSource, lookup func(cluster string, gk schema.GroupKind) (Kind, bool)) *Controller {
	c := &Controller{Sources: sources, Lookup: lookup, graph: newGraph(), dirty: map[string]bool{Builtin: true}, refresh: make(chan struct{}, 1)}
	c.runner = runner.New("garbagecollector", workers, c.reconcile)
	c.add = c.runner.Add
	c.orphan = orphanStep{dependents: c.graph.dependentsOf, removeOwnerRef: c.removeOwnerRefs, removeFinalizer: c.removeFinalizer}
	c.fg = foregroundStep{dependents: c.graph.dependentsOf, enqueue: c.enqueue, removeFinalizer: c.removeFinalizer}
	c.ownersSt = ownersStep{owner: c.ownerState, hasDependents: c.graph.hasDependents, unblock: c.unblockDependents,
		removeOwnerRefs: c.removeOwnerRefs, delete: c.delete}
	return c
}

// Refresh makes the collector ask Sources again what holder needs: cheap,
// for callers on a hot path (the CRD index calls it on every change of a
// cluster's types).
func (c *Controller) Refresh(holder string) {
	c.dirtyMu.Lock()
	c.dirty[holder] = true
	c.dirtyMu.Unlock()
	select {
	case c.refresh <- struct{}{}:
	default:
	}
}

// Dependents is the number of dependents the collector follows.
func (c *Controller) Dependents() int { return c.graph.size() }

// Run works until ctx is done.
func (c *Controller) Run(ctx context.Context) {
	go c.runner.Run(ctx)
	for {
		c.dirtyMu.Lock()
		holders := c.dirty
		c.dirty = map[string]bool{}
		c.dirtyMu.Unlock()
		for h := range holders {
			for _, id := range c.watches.hold(ctx, h, c.Sources(h), c.watch) {
				for _, n := range c.graph.dropSource(id) {
					c.enqueueOwners(n.object, n.owners)
				}
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-c.refresh:
		}
	}
}

// observe follows one change of a watched object.
func (c *Controller) observe(s Source, obj any, deleted bool) {
	o, m, ok := objectOf(s, obj)
	if !ok {
		return
	}
	if c.Changes != nil {
		c.Changes(o.Cluster, s.Resource, o.Namespace, deleted)
	}
	if deleted {
		if c.graph.hasDependents(o.Cluster, o.UID) {
			c.gone.add(uid{o.Cluster, o.UID})
		}
		old := c.graph.remove(o.Cluster, o.UID)
		c.enqueueOwners(o, old)
		for _, d := range c.graph.dependentsOf(o.Cluster, o.UID) {
			c.enqueue(d.object)
		}
		return
	}
	old, changed := c.graph.set(s.ID, o, m.GetOwnerReferences())
	if changed {
		if len(m.GetOwnerReferences()) > 0 {
			c.enqueue(o)
		}
		c.enqueueOwners(o, old) // an owner in the foreground may wait for this one
	}
	if m.GetDeletionTimestamp() != nil && (hasFinalizer(m, metav1.FinalizerOrphanDependents) || hasFinalizer(m, metav1.FinalizerDeleteDependents)) {
		c.enqueue(o)
	}
}

// replace follows a (re)list of a source whose objects in the clusters
// of in it holds: nodes not listed went while no watch ran, and every
// dependent listed is checked again. So is every dependent of an owner
// of the source's kinds in those clusters that the list lacks: the owner
// went before the watch ran (a type watched a moment after it is served,
// a watch down for a while), and no watch saw it go. Owners of the same
// kind elsewhere (another cluster's type of that name, stored under
// another prefix) are not this list's to judge.
func (c *Controller) replace(s Source, in clusterSet, list []any) {
	present := map[uid]bool{}
	listed := make(map[uid]bool, len(list))
	kinds := map[schema.GroupKind]bool{}
	if !s.GroupKind.Empty() {
		kinds[s.GroupKind] = true
	}
	for _, obj := range list {
		o, m, ok := objectOf(s, obj)
		if !ok {
			continue
		}
		id := uid{o.Cluster, o.UID}
		listed[id] = true
		if s.KindPerObject {
			kinds[kindOf(s, obj)] = true
		}
		if len(m.GetOwnerReferences()) > 0 {
			present[id] = true
		}
	}
	for _, n := range c.graph.replace(s.ID, present) {
		c.enqueueOwners(n.object, n.owners)
	}
	for _, obj := range list {
		o, m, ok := objectOf(s, obj)
		if !ok {
			continue
		}
		if len(m.GetOwnerReferences()) > 0 {
			c.graph.set(s.ID, o, m.GetOwnerReferences())
			c.enqueue(o)
		}
		if m.GetDeletionTimestamp() != nil {
			c.enqueue(o)
		}
	}
	for gk := range kinds {
		for _, owner := range c.graph.ownersOfKind(gk, in) {
			if listed[owner] {
				continue
			}
			for _, d := range c.graph.dependentsOf(owner.cluster, owner.uid) {
				c.enqueue(d.object)
			}
		}
	}
}

func (c *Controller) enqueue(o object) {
	c.add(runner.Key{Cluster: o.Cluster, Resource: o.GroupKind, Namespace: o.Namespace, Name: o.Name})
}

// enqueueOwners enqueues the owners refs name, as seen from o. The
// namespace is o's; reconcile drops it for cluster-scoped kinds.
func (c *Controller) enqueueOwners(o object, refs []metav1.OwnerReference) {
	for _, r := range refs {
		c.add(runner.Key{Cluster: o.Cluster, Resource: groupKindOf(r).String(), Namespace: o.Namespace, Name: r.Name})
	}
}

func groupKindOf(r metav1.OwnerReference) schema.GroupKind {
	gv, _ := schema.ParseGroupVersion(r.APIVersion)
	return schema.GroupKind{Group: gv.Group, Kind: r.Kind}
}

// reconcile looks at one object and runs the step its state calls for.
func (c *Controller) reconcile(ctx context.Context, key runner.Key) (time.Duration, error) {
	kind, ok := c.Lookup(key.Cluster, schema.ParseGroupKind(key.Resource))
	if !ok {
		return 0, nil
	}
	ns := key.Namespace
	if !kind.Namespaced {
		ns = ""
	}
	obj, err := kind.Resource.Get(local.Context(ctx, key.Cluster, ns), key.Name, &metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return 0, err
	}
	o := object{Cluster: key.Cluster, GroupKind: key.Resource, Namespace: ns, Name: key.Name, UID: m.GetUID()}
	deleting := m.GetDeletionTimestamp() != nil
	if deleting && (hasFinalizer(m, metav1.FinalizerOrphanDependents) || hasFinalizer(m, metav1.FinalizerDeleteDependents)) && !c.watches.synced() {
		return time.Second, nil // the graph does not know every dependent yet
	}
	switch {
	case m.GetDeletionTimestamp() != nil && hasFinalizer(m, metav1.FinalizerOrphanDependents):
		return 0, c.orphan.reconcile(ctx, o)
	case m.GetDeletionTimestamp() != nil && hasFinalizer(m, metav1.FinalizerDeleteDependents):
		return c.fg.reconcile(ctx, o)
	case m.GetDeletionTimestamp() != nil:
		return 0, nil // going anyway
	case len(m.GetOwnerReferences()) > 0:
		if !kind.Namespaced {
			c.reportInvalidOwners(ctx, key.Cluster, obj, m.GetOwnerReferences())
		}
		return c.ownersSt.reconcile(ctx, o, kind.Namespaced, m.GetOwnerReferences(), m.GetFinalizers())
	}
	return 0, nil
}

func hasFinalizer(m metav1.Object, f string) bool { return slices.Contains(m.GetFinalizers(), f) }

// ownerState reads the owner ref names, as seen from dependent o. An
// owner present is unobserved when no watch of its kind covers its
// cluster: nothing would tell its dependents that it went.
func (c *Controller) ownerState(ctx context.Context, o object, namespaced bool, ref metav1.OwnerReference) (ownerState, error) {
	if c.gone.has(uid{o.Cluster, ref.UID}) {
		return ownerAbsent, nil // seen deleted: a UID never comes back
	}
	kind, ok := c.Lookup(o.Cluster, groupKindOf(ref))
	if !ok {
		return ownerUnobserved, nil // not served yet: look again
	}
	ns := ""
	if kind.Namespaced {
		if !namespaced {
			return ownerUnresolvable, nil // a cluster-scoped object cannot have a namespaced owner
		}
		ns = o.Namespace
	}
	// A live read (not the watch cache): absence must be verified.
	obj, err := kind.Resource.Get(local.Context(ctx, o.Cluster, ns), ref.Name, &metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return ownerAbsent, nil
	}
	if err != nil {
		return ownerSolid, err
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return ownerSolid, err
	}
	switch {
	case m.GetUID() != ref.UID:
		return ownerAbsent, nil // a namesake, not the owner
	case m.GetDeletionTimestamp() != nil && hasFinalizer(m, metav1.FinalizerDeleteDependents):
		return ownerWaiting, nil
	case !c.watches.watching(kind.Source, o.Cluster):
		return ownerUnobserved, nil
	}
	return ownerSolid, nil
}

// update changes o in place through its registry, retrying on conflicts
// with a fresh read.
func (c *Controller) update(ctx context.Context, o object, change func(m metav1.Object) bool) error {
	kind, ok := c.Lookup(o.Cluster, schema.ParseGroupKind(o.GroupKind))
	if !ok {
		return nil
	}
	_, _, err := kind.Resource.Update(local.Context(ctx, o.Cluster, o.Namespace), o.Name,
		rest.DefaultUpdatedObjectInfo(nil, func(_ context.Context, _, old runtime.Object) (runtime.Object, error) {
			obj := old.DeepCopyObject()
			m, err := meta.Accessor(obj)
			if err != nil {
				return nil, err
			}
			if o.UID != "" && m.GetUID() != o.UID {
				return nil, apierrors.NewNotFound(schema.GroupResource{Resource: o.GroupKind}, o.Name)
			}
			if !change(m) {
				return old, nil
			}
			return obj, nil
		}), rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

func (c *Controller) removeFinalizer(ctx context.Context, o object, finalizer string) error {
	return c.update(ctx, o, func(m metav1.Object) bool {
		fs := m.GetFinalizers()
		keep := slices.DeleteFunc(slices.Clone(fs), func(f string) bool { return f == finalizer })
		m.SetFinalizers(keep)
		return len(keep) != len(fs)
	})
}

func (c *Controller) removeOwnerRefs(ctx context.Context, o object, owners ...types.UID) error {
	return c.update(ctx, o, func(m metav1.Object) bool {
		refs := m.GetOwnerReferences()
		keep := slices.DeleteFunc(slices.Clone(refs), func(r metav1.OwnerReference) bool { return slices.Contains(owners, r.UID) })
		m.SetOwnerReferences(keep)
		return len(keep) != len(refs)
	})
}

// unblockDependents clears blockOwnerDeletion on the references to o, so
// that o deleted in the foreground never waits on a cycle.
func (c *Controller) unblockDependents(ctx context.Context, o object) error {
	for _, d := range c.graph.dependentsOf(o.Cluster, o.UID) {
		if !d.block {
			continue
		}
		if err := c.update(ctx, d.object, func(m metav1.Object) bool {
			refs := m.GetOwnerReferences()
			changed := false
			for i := range refs {
				if refs[i].UID == o.UID && isTrue(refs[i].BlockOwnerDeletion) {
					refs[i].BlockOwnerDeletion = nil
					changed = true
				}
			}
			m.SetOwnerReferences(refs)
			return changed
		}); err != nil {
			return err
		}
	}
	return nil
}

func (c *Controller) delete(ctx context.Context, o object, policy metav1.DeletionPropagation) error {
	kind, ok := c.Lookup(o.Cluster, schema.ParseGroupKind(o.GroupKind))
	if !ok {
		return nil
	}
	_, _, err := kind.Resource.Delete(local.Context(ctx, o.Cluster, o.Namespace), o.Name, rest.ValidateAllObjectFunc,
		&metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &o.UID}, PropagationPolicy: &policy})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil // gone, or a namesake
	}
	return err
}
