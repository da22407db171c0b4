package sharding

import (
	"context"
	"maps"
	"reflect"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/meshplane/meshplane/core/internal/cacheserver"
)

// ShardAnnotation names the shard a replicated object comes from (the
// cache server sets it, as kcp's does).
const ShardAnnotation = cacheserver.ShardAnnotation

// cacheReplica is the key of the cache server's replica among Others'
// replicas (no shard has this name).
const cacheReplica = "*"

// The RBAC kinds shards replicate through the cache server, of the
// clusters that hold an APIExport only: what the bind check and maximal
// permission policies read (a deep review), so that shards decide those
// checks on the replica, and a revocation reaches them by watch.
var (
	ClusterRoles        = Kind{rbacv1.SchemeGroupVersion.WithResource("clusterroles"), func() runtime.Object { return &rbacv1.ClusterRole{} }}
	ClusterRoleBindings = Kind{rbacv1.SchemeGroupVersion.WithResource("clusterrolebindings"), func() runtime.Object { return &rbacv1.ClusterRoleBinding{} }}
	RBACKinds           = []Kind{ClusterRoles, ClusterRoleBindings}
)

// CacheKinds are the kinds shards write to and read from the cache
// server.
var CacheKinds = append(append([]Kind{}, replicated...), RBACKinds...)

// KindName is the kind of k's objects (the Go type's name).
func (k Kind) KindName() string { return reflect.TypeOf(k.New()).Elem().Name() }

// CacheResources are the resources the cache server holds.
func CacheResources() []cacheserver.Resource {
	out := make([]cacheserver.Resource, 0, len(CacheKinds))
	for _, k := range CacheKinds {
		out = append(out, cacheserver.Resource{GroupVersionResource: k.GVR, Kind: k.KindName()})
	}
	return out
}

// followCache starts the replica of the cache server (once), and calls
// the OnShardsChanged functions when the set of other shards changed.
func (o *Others) followCache(seen map[string]bool) {
	o.mu.Lock()
	started := false
	if _, ok := o.running[cacheReplica]; !ok && o.ctx != nil {
		r, err := o.startCache()
		if err != nil {
			klog.FromContext(o.ctx).Error(err, "Cannot replicate from the cache server")
		} else {
			o.running[cacheReplica] = r
			started = true
		}
	}
	changed := !maps.Equal(o.shardNames, seen)
	o.shardNames = seen
	o.mu.Unlock()
	if started || changed {
		o.shardsChanged()
	}
}

// startCache runs one informer per kind on the cache server, over every
// shard and cluster there, leaving this shard's own objects out. Called
// with o.mu held.
func (o *Others) startCache() (*otherShard, error) {
	host := o.shards.CacheServer.Host + "/shards/*/clusters/*"
	ctx, stop := context.WithCancel(o.ctx)
	r := &otherShard{baseURL: host, stop: stop, fromCache: true, informers: map[schema.GroupVersionResource]cache.SharedIndexInformer{}}
	for _, kind := range CacheKinds {
		inf, err := o.informer(o.shards.CacheServer, host, kind, true)
		if err != nil {
			stop()
			return nil, err
		}
		r.informers[kind.GVR] = inf
	}
	for _, inf := range r.informers {
		go inf.RunWithContext(ctx)
	}
	klog.FromContext(o.ctx).V(2).Info("Replicating the other shards from the cache server", "url", o.shards.CacheServer.Host)
	return r, nil
}

// HasRBAC reports whether the replica holds the RBAC of a cluster of
// another shard: read from the cache server, synced, and the cluster
// holds an APIExport there (the writers replicate the RBAC of those
// clusters only).
func (o *Others) HasRBAC(cluster string) bool {
	if o.shards.CacheServer == nil {
		return false
	}
	exports, where := o.InCluster(APIExports, cluster)
	if where != Elsewhere || len(exports) == 0 {
		return false
	}
	if _, where := o.InCluster(ClusterRoleBindings, cluster); where != Elsewhere {
		return false
	}
	_, where = o.InCluster(ClusterRoles, cluster)
	return where == Elsewhere
}

// ReplicaRBAC reads the replicated RBAC of other shards' clusters: a
// rbac.RuleSource for deciding deep checks on the replica.
type ReplicaRBAC struct{ Others *Others }

// ListClusterRoleBindings lists a cluster's replicated bindings.
func (s ReplicaRBAC) ListClusterRoleBindings(_ context.Context, cluster string) ([]*rbacv1.ClusterRoleBinding, error) {
	objs, _ := s.Others.InCluster(ClusterRoleBindings, cluster)
	out := make([]*rbacv1.ClusterRoleBinding, 0, len(objs))
	for _, o := range objs {
		out = append(out, o.(*rbacv1.ClusterRoleBinding))
	}
	return out, nil
}

// ListRoleBindings: namespaced RBAC is not replicated (the checks made on
// the replica are about cluster-scoped exports).
func (s ReplicaRBAC) ListRoleBindings(context.Context, string, string) ([]*rbacv1.RoleBinding, error) {
	return nil, nil
}

// GetClusterRole reads a replicated ClusterRole.
func (s ReplicaRBAC) GetClusterRole(_ context.Context, cluster, name string) (*rbacv1.ClusterRole, error) {
	o, _, ok := s.Others.Get(ClusterRoles, cluster, name)
	if !ok {
		return nil, apierrors.NewNotFound(rbacv1.Resource("clusterroles"), name)
	}
	return o.(*rbacv1.ClusterRole), nil
}

// GetRole: namespaced RBAC is not replicated.
func (s ReplicaRBAC) GetRole(_ context.Context, _, _, name string) (*rbacv1.Role, error) {
	return nil, apierrors.NewNotFound(rbacv1.Resource("roles"), name)
}
