// Package tenancy holds what the workspace tree is made of: the index from
// workspace paths to logical clusters, workspace type resolution and
// compatibility, and the objects every server starts with.
package tenancy

import (
	"strings"
	"sync"

	corev1alpha1 "github.com/kcp-dev/sdk/apis/core/v1alpha1"
	"github.com/kcp-dev/sdk/apis/tenancy/initialization"
	"github.com/kcp-dev/sdk/apis/tenancy/termination"
	tenancyv1alpha1 "github.com/kcp-dev/sdk/apis/tenancy/v1alpha1"
	"k8s.io/client-go/tools/cache"

	"github.com/meshplane/meshplane/core/internal/clusters"
	"github.com/meshplane/meshplane/core/internal/registry/wildcard"
)

// PathAnnotation holds a logical cluster's canonical workspace path.
const PathAnnotation = "kcp.io/path"

// TypeAnnotation holds the <path>:<name> of a logical cluster's type.
const TypeAnnotation = "internal.tenancy.kcp.io/type"

// Index maps workspace paths to logical clusters, from a wildcard watch
// of every cluster's LogicalCluster object.
//
// A LogicalCluster's kcp.io/path annotation is taken only where the
// workspace tree agrees with it (defence in depth: only the system writes
// it, see admission/reservedmetadata): root is "root"; a workspace's path
// is its parent's path (when this index holds the parent) and the name
// of the Workspace its spec.owner names; a home workspace's is
// user:<name>, whose cluster is derived from the name. A path the tree
// contradicts resolves to nothing, and the cluster is known by its name
// only.
type Index struct {
	informer cache.SharedIndexInformer

	mu     sync.RWMutex
	byPath map[string]string
	byName map[string]*corev1alpha1.LogicalCluster
	// paths holds each cluster's path, when the tree agrees with it;
	// verified those whose parent this index holds (a claim checked only
	// against the Workspace's name never displaces a verified one).
	paths    map[string]string
	verified map[string]bool
	// children holds the clusters whose spec.owner is in a cluster.
	children map[string]map[string]bool
}

// NewIndex returns an index over the LogicalCluster registry.
func NewIndex(logicalClusters wildcard.Storage) *Index {
	i := newIndex()
	i.informer = wildcard.NewInformer(logicalClusters, &corev1alpha1.LogicalCluster{})
	wildcard.Mirror(i.informer, i.set)
	return i
}

func newIndex() *Index {
	return &Index{byPath: map[string]string{}, byName: map[string]*corev1alpha1.LogicalCluster{},
		paths: map[string]string{}, verified: map[string]bool{}, children: map[string]map[string]bool{}}
}

// Informer is the underlying informer, for controllers to follow.
func (i *Index) Informer() cache.SharedIndexInformer { return i.informer }

func (i *Index) set(obj any, deleted bool) {
	lc, ok := obj.(*corev1alpha1.LogicalCluster)
	if !ok {
		return
	}
	name := lc.Annotations[clusters.Annotation]
	i.mu.Lock()
	defer i.mu.Unlock()
	if old, ok := i.byName[name]; ok {
		i.unclaim(name)
		if o := old.Spec.Owner; o != nil {
			delete(i.children[o.Cluster], name)
		}
	}
	if deleted {
		delete(i.byName, name)
		return
	}
	i.byName[name] = lc
	if o := lc.Spec.Owner; o != nil {
		if i.children[o.Cluster] == nil {
			i.children[o.Cluster] = map[string]bool{}
		}
		i.children[o.Cluster][name] = true
	}
	i.claim(name)
	i.reclaimChildren(name, map[string]bool{name: true})
}

// reclaimChildren checks the paths of a cluster's descendants again: each
// is checked against its parent's.
func (i *Index) reclaimChildren(name string, seen map[string]bool) {
	for child := range i.children[name] {
		if seen[child] {
			continue
		}
		seen[child] = true
		i.unclaim(child)
		i.claim(child)
		i.reclaimChildren(child, seen)
	}
}

// claim records a cluster's path if the tree agrees with it.
func (i *Index) claim(name string) {
	lc := i.byName[name]
	if lc == nil {
		return
	}
	path, verified := i.treePath(name, lc)
	if path == "" {
		return
	}
	if holder, ok := i.byPath[path]; ok && holder != name && i.verified[holder] && !verified {
		return
	}
	i.byPath[path] = name
	i.paths[name] = path
	i.verified[name] = verified
}

// unclaim forgets a cluster's path.
func (i *Index) unclaim(name string) {
	if p, ok := i.paths[name]; ok {
		if i.byPath[p] == name {
			delete(i.byPath, p)
		}
		delete(i.paths, name)
		delete(i.verified, name)
	}
}

// treePath returns lc's path annotation if the workspace tree agrees
// with it, "" otherwise; verified is false when only the last segment
// could be checked (the parent is not in this index: another shard's).
func (i *Index) treePath(name string, lc *corev1alpha1.LogicalCluster) (path string, verified bool) {
	path = lc.Annotations[PathAnnotation]
	if !PathFitsOwner(name, lc) {
		return "", false
	}
	o := lc.Spec.Owner
	if o == nil {
		return path, true // root or a home workspace: derived from the name
	}
	if _, ok := i.byName[o.Cluster]; !ok {
		return path, false
	}
	if i.paths[o.Cluster] != path[:strings.LastIndex(path, ":")] {
		return "", false
	}
	return path, true
}

// PathFitsOwner reports whether the kcp.io/path annotation of cluster's
// LogicalCluster fits what the cluster itself tells of its place in the
// tree, without looking at its parent: root is "root"; a workspace's path
// ends in the name of the Workspace its spec.owner names; a home
// workspace's is user:<name>, whose cluster is derived from the name (or
// user:<cluster> for names that are no path segment).
func PathFitsOwner(cluster string, lc *corev1alpha1.LogicalCluster) bool {
	path := lc.Annotations[PathAnnotation]
	sep := strings.LastIndex(path, ":")
	if path == "" || sep < 0 {
		return cluster == clusters.Root && path == clusters.Root && lc.Spec.Owner == nil
	}
	parentPath, last := path[:sep], path[sep+1:]
	if o := lc.Spec.Owner; o != nil {
		return o.Resource == "workspaces" && o.Name == last && cluster != clusters.Root
	}
	return parentPath == "user" && (HomeClusterName(last) == cluster || last == cluster)
}

// Resolve returns the logical cluster a path or cluster name designates.
// A single segment is a cluster name unless it is a known path.
func (i *Index) Resolve(pathOrName string) (string, bool) {
	i.mu.RLock()
	defer i.mu.RUnlock()
	if name, ok := i.byPath[pathOrName]; ok {
		return name, true
	}
	if _, ok := i.byName[pathOrName]; ok {
		return pathOrName, true
	}
	return "", false
}

// Get returns the LogicalCluster of a cluster (shared; do not modify).
func (i *Index) Get(cluster string) (*corev1alpha1.LogicalCluster, bool) {
	i.mu.RLock()
	defer i.mu.RUnlock()
	lc, ok := i.byName[cluster]
	return lc, ok
}

// Path returns the canonical path of a cluster (its name when it has
// none the tree agrees with).
func (i *Index) Path(cluster string) string {
	i.mu.RLock()
	defer i.mu.RUnlock()
	if p, ok := i.paths[cluster]; ok {
		return p
	}
	return cluster
}

// Workspace returns the phase and path of a cluster; ok is false for
// clusters the index does not know. It implements
// authorization.Workspaces.
func (i *Index) Workspace(cluster string) (phase, path string, ok bool) {
	lc, ok := i.Get(cluster)
	if !ok {
		return "", "", false
	}
	return string(lc.Status.Phase), i.Path(cluster), true
}

// HasSynced reports whether the index has seen every cluster once.
func (i *Index) HasSynced() bool { return i.informer.HasSynced() }

// LifecycleLabels are the labels kcp puts on a LogicalCluster for each of
// its initializers and terminators, so virtual workspaces can select
// clusters by label.
func LifecycleLabels(inits []corev1alpha1.LogicalClusterInitializer, terms []corev1alpha1.LogicalClusterTerminator) map[string]string {
	out := map[string]string{}
	for _, i := range inits {
		k, v := initialization.InitializerToLabel(i)
		out[k] = v
	}
	for _, t := range terms {
		k, v := termination.TerminatorToLabel(t)
		out[k] = v
	}
	return out
}

// IsLifecycleLabel reports whether a label key is an initializer or
// terminator label.
func IsLifecycleLabel(key string) bool {
	return strings.HasPrefix(key, tenancyv1alpha1.WorkspaceInitializerLabelPrefix) ||
		strings.HasPrefix(key, tenancyv1alpha1.WorkspaceTerminatorLabelPrefix)
}

// SettleInitializers brings an initializing cluster in step with the
// initializers it has left: its lifecycle labels name them (and its
// terminators, which as in kcp are labelled from the start), and with none
// left it is Ready. Whoever removes an initializer (the in-process
// initializers, the logicalcluster admission for everyone else) settles the
// cluster in the same write; the logicalcluster controller catches up with
// clusters written otherwise.
func SettleInitializers(lc *corev1alpha1.LogicalCluster) {
	lc.Labels = WithLifecycleLabels(lc.Labels, lc.Status.Initializers, lc.Status.Terminators)
	if lc.Status.Phase == corev1alpha1.LogicalClusterPhaseInitializing && len(lc.Status.Initializers) == 0 {
		lc.Status.Phase = corev1alpha1.LogicalClusterPhaseReady
	}
}

// WithLifecycleLabels replaces the lifecycle labels of labels.
func WithLifecycleLabels(labels map[string]string, inits []corev1alpha1.LogicalClusterInitializer, terms []corev1alpha1.LogicalClusterTerminator) map[string]string {
	out := LifecycleLabels(inits, terms)
	for k, v := range labels {
		if !IsLifecycleLabel(k) {
			out[k] = v
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
