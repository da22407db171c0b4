package runner

import (
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/tools/cache"

	"github.com/meshplane/meshplane/core/pkg/clusters"
)

// Key names one object in one logical cluster: what a queue holds.
type Key struct {
	Cluster   string
	Namespace string
	Name      string
}

// String is kcp's form of the key: <cluster>|[<namespace>/]<name>.
func (k Key) String() string {
	if k.Namespace == "" {
		return k.Cluster + "|" + k.Name
	}
	return k.Cluster + "|" + k.Namespace + "/" + k.Name
}

// ClusterKey is the key of a whole logical cluster (its LogicalCluster).
func ClusterKey(cluster string) Key { return Key{Cluster: cluster} }

// KeyOf returns the key of a stored object: its kcp.io/cluster
// annotation, namespace and name. Tombstones are unwrapped; ok is false
// for anything that is no object.
func KeyOf(obj any) (Key, bool) {
	m, err := meta.Accessor(Unwrap(obj))
	if err != nil {
		return Key{}, false
	}
	return Key{Cluster: m.GetAnnotations()[clusters.Annotation], Namespace: m.GetNamespace(), Name: m.GetName()}, true
}

// ObjectKeys is the KeysFunc that enqueues the object itself.
func ObjectKeys(obj any) []Key {
	if k, ok := KeyOf(obj); ok {
		return []Key{k}
	}
	return nil
}

// Unwrap returns the last known object of a tombstone, else obj.
func Unwrap(obj any) any {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		return t.Obj
	}
	return obj
}
