package garbagecollector

import (
	"slices"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// object names one object of one logical cluster.
type object struct {
	Cluster   string
	GroupKind string // <Kind>[.<group>]
	Namespace string
	Name      string
	UID       types.UID
}

// uid is an object's identity: a UID means something only inside its
// logical cluster, so an owner is always (cluster, UID).
type uid struct {
	cluster string
	uid     types.UID
}

// dependent is an edge from an owner to one of its dependents.
type dependent struct {
	object
	// block is the dependent's blockOwnerDeletion towards that owner.
	block bool
}

// node is what the graph keeps of a dependent: only objects with
// ownerReferences are kept, so memory follows dependents, not objects.
type node struct {
	object
	source string
	owners []metav1.OwnerReference
}

// graph indexes dependents by (cluster, owner UID), and the owners by
// cluster and by the kind their dependents' references name.
type graph struct {
	mu         sync.RWMutex
	nodes      map[uid]*node
	dependents map[uid]map[uid]bool // owner -> dependent -> blockOwnerDeletion
	// ownerKinds: cluster -> owner kind -> owner -> references. Per
	// cluster, so that a list catches up in the clusters it serves only.
	ownerKinds map[string]map[schema.GroupKind]map[types.UID]int
}

func newGraph() *graph {
	return &graph{nodes: map[uid]*node{}, dependents: map[uid]map[uid]bool{},
		ownerKinds: map[string]map[schema.GroupKind]map[types.UID]int{}}
}

// set records obj's ownerReferences (none removes it). It returns the
// references obj had before and whether they changed.
func (g *graph) set(source string, obj object, owners []metav1.OwnerReference) (old []metav1.OwnerReference, changed bool) {
	id := uid{obj.Cluster, obj.UID}
	g.mu.Lock()
	defer g.mu.Unlock()
	if n := g.nodes[id]; n != nil {
		old = n.owners
		if sameOwners(old, owners) {
			n.object, n.source = obj, source
			return old, false
		}
		g.unlinkLocked(id, n)
	}
	if len(owners) == 0 {
		return old, len(old) > 0
	}
	g.nodes[id] = &node{object: obj, source: source, owners: slices.Clone(owners)}
	for _, o := range owners {
		oid := uid{obj.Cluster, o.UID}
		if g.dependents[oid] == nil {
			g.dependents[oid] = map[uid]bool{}
		}
		g.dependents[oid][id] = g.dependents[oid][id] || (o.BlockOwnerDeletion != nil && *o.BlockOwnerDeletion)
		g.countOwnerLocked(obj.Cluster, groupKindOf(o), o.UID, 1)
	}
	return old, true
}

// remove forgets obj and returns the references it had.
func (g *graph) remove(cluster string, id types.UID) []metav1.OwnerReference {
	g.mu.Lock()
	defer g.mu.Unlock()
	k := uid{cluster, id}
	n := g.nodes[k]
	if n == nil {
		return nil
	}
	g.unlinkLocked(k, n)
	return n.owners
}

func (g *graph) unlinkLocked(id uid, n *node) {
	delete(g.nodes, id)
	for _, o := range n.owners {
		oid := uid{id.cluster, o.UID}
		delete(g.dependents[oid], id)
		if len(g.dependents[oid]) == 0 {
			delete(g.dependents, oid)
		}
		g.countOwnerLocked(id.cluster, groupKindOf(o), o.UID, -1)
	}
}

// countOwnerLocked adds delta to the references to owner (cluster, id)
// of kind gk, forgetting it at zero.
func (g *graph) countOwnerLocked(cluster string, gk schema.GroupKind, id types.UID, delta int) {
	kinds := g.ownerKinds[cluster]
	if kinds == nil {
		kinds = map[schema.GroupKind]map[types.UID]int{}
		g.ownerKinds[cluster] = kinds
	}
	owners := kinds[gk]
	if owners == nil {
		owners = map[types.UID]int{}
		kinds[gk] = owners
	}
	if owners[id] += delta; owners[id] > 0 {
		return
	}
	delete(owners, id)
	if len(owners) == 0 {
		delete(kinds, gk)
		if len(kinds) == 0 {
			delete(g.ownerKinds, cluster)
		}
	}
}

// replace makes source's part of the graph what present says (after a
// list); it returns the nodes that went, whose owners may care.
func (g *graph) replace(source string, present map[uid]bool) []*node {
	g.mu.Lock()
	defer g.mu.Unlock()
	var gone []*node
	for id, n := range g.nodes {
		if n.source == source && !present[id] {
			g.unlinkLocked(id, n)
			gone = append(gone, n)
		}
	}
	return gone
}

// dropSource forgets every node of source (a resource no longer served).
func (g *graph) dropSource(source string) []*node { return g.replace(source, nil) }

// dependentsOf lists the dependents of the owner (cluster, owner).
func (g *graph) dependentsOf(cluster string, owner types.UID) []dependent {
	g.mu.RLock()
	defer g.mu.RUnlock()
	deps := g.dependents[uid{cluster, owner}]
	out := make([]dependent, 0, len(deps))
	for id, block := range deps {
		if n := g.nodes[id]; n != nil {
			out = append(out, dependent{object: n.object, block: block})
		}
	}
	return out
}

// ownersOfKind lists the owners the references of dependents name as of
// kind gk, in the clusters of in (nil: in every cluster).
func (g *graph) ownersOfKind(gk schema.GroupKind, in clusterSet) []uid {
	g.mu.RLock()
	defer g.mu.RUnlock()
	var out []uid
	add := func(cluster string) {
		for id := range g.ownerKinds[cluster][gk] {
			out = append(out, uid{cluster, id})
		}
	}
	switch {
	case in == nil:
		for cluster := range g.ownerKinds {
			add(cluster)
		}
	case len(in) < len(g.ownerKinds):
		for cluster := range in {
			add(cluster)
		}
	default:
		for cluster := range g.ownerKinds {
			if in[cluster] {
				add(cluster)
			}
		}
	}
	return out
}

// hasDependents reports whether the owner has any dependent.
func (g *graph) hasDependents(cluster string, owner types.UID) bool {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return len(g.dependents[uid{cluster, owner}]) > 0
}

// size is the number of dependents the graph holds.
func (g *graph) size() int {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return len(g.nodes)
}

func sameOwners(a, b []metav1.OwnerReference) bool {
	return slices.EqualFunc(a, b, func(x, y metav1.OwnerReference) bool {
		return x.UID == y.UID && x.Kind == y.Kind && x.APIVersion == y.APIVersion && x.Name == y.Name &&
			isTrue(x.BlockOwnerDeletion) == isTrue(y.BlockOwnerDeletion)
	})
}

func isTrue(b *bool) bool { return b != nil && *b }
