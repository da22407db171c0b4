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
type Index struct {
	informer cache.SharedIndexInformer

	mu     sync.RWMutex
	byPath map[string]string
	byName map[string]*corev1alpha1.LogicalCluster
}

// NewIndex returns an index over the LogicalCluster registry.
func NewIndex(logicalClusters wildcard.Storage) *Index {
	i := &Index{byPath: map[string]string{}, byName: map[string]*corev1alpha1.LogicalCluster{}}
	i.informer = wildcard.NewInformer(logicalClusters, &corev1alpha1.LogicalCluster{})
	wildcard.Mirror(i.informer, i.set)
	return i
}

// Informer is the underlying informer, for controllers to follow.
func (i *Index) Informer() cache.SharedIndexInformer { return i.informer }

func (i *Index) set(obj any, deleted bool) {
	lc, ok := obj.(*corev1alpha1.LogicalCluster)
	if !ok {
		return
	}
	name := lc.Annotations[clusters.Annotation]
	path := lc.Annotations[PathAnnotation]
	i.mu.Lock()
	defer i.mu.Unlock()
	if old, ok := i.byName[name]; ok {
		if p := old.Annotations[PathAnnotation]; p != "" && i.byPath[p] == name {
			delete(i.byPath, p)
		}
	}
	if deleted {
		delete(i.byName, name)
		return
	}
	i.byName[name] = lc
	if path != "" {
		i.byPath[path] = name
	}
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

// Path returns the canonical path of a cluster.
func (i *Index) Path(cluster string) string {
	if lc, ok := i.Get(cluster); ok {
		if p := lc.Annotations[PathAnnotation]; p != "" {
			return p
		}
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
// initializers it has left: its lifecycle labels name them, and with none
// left it is Ready. Whoever removes an initializer (the in-process
// initializers, the logicalcluster admission for everyone else) settles the
// cluster in the same write; the logicalcluster controller catches up with
// clusters written otherwise.
func SettleInitializers(lc *corev1alpha1.LogicalCluster) {
	lc.Labels = WithLifecycleLabels(lc.Labels, lc.Status.Initializers, nil)
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
