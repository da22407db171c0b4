// Package quota is what ResourceQuota admission and the quota controller
// share: which objects a quota counts, in one logical cluster only, and
// how its usage is computed.
//
// A quota counts objects of its own namespace. As in kcp, a quota in the
// "admin" namespace annotated experimental.quota.kcp.io/cluster-scoped:
// "true" counts the whole logical cluster instead: objects of every
// namespace and cluster-scoped objects such as Workspaces.
package quota

import (
	"context"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

const (
	// ClusterScopedAnnotation marks a quota that counts its whole logical
	// cluster (kcp's name).
	ClusterScopedAnnotation = "experimental.quota.kcp.io/cluster-scoped"
	// ClusterScopedNamespace is where such a quota must live.
	ClusterScopedNamespace = "admin"
	// countPrefix starts object count names: count/<resource>[.<group>].
	countPrefix = "count/"
)

// coreCounted are the core resources kube counts under their bare name.
var coreCounted = map[corev1.ResourceName]bool{
	corev1.ResourceConfigMaps: true, corev1.ResourceSecrets: true, corev1.ResourceServices: true,
	corev1.ResourcePersistentVolumeClaims: true, corev1.ResourcePods: true, corev1.ResourceQuotas: true,
	corev1.ResourceReplicationControllers: true,
}

// ResourceOf returns the resource an object count names: count/<resource>
// [.<group>] or one of the core counted resources. ok is false for
// anything else (compute and storage, which need served pods and
// persistent volume claims: see Unserved).
func ResourceOf(name corev1.ResourceName) (schema.GroupResource, bool) {
	if coreCounted[name] {
		return schema.GroupResource{Resource: string(name)}, true
	}
	s, ok := strings.CutPrefix(string(name), countPrefix)
	if !ok || s == "" {
		return schema.GroupResource{}, false
	}
	r, g, _ := strings.Cut(s, ".")
	return schema.GroupResource{Group: g, Resource: r}, true
}

// ClusterScoped reports whether q counts its whole logical cluster.
func ClusterScoped(q *corev1.ResourceQuota) bool {
	return q.Namespace == ClusterScopedNamespace && q.Annotations[ClusterScopedAnnotation] == "true"
}

// Applies reports whether q counts objects created in namespace ns ("" for
// cluster-scoped objects) of q's own cluster.
func Applies(q *corev1.ResourceQuota, ns string) bool {
	if ClusterScoped(q) {
		return true
	}
	return ns != "" && ns == q.Namespace
}

// Scoped reports whether q has scopes or a scope selector: kube matches
// those against pods only, and no pods are served, so such a quota
// counts nothing.
func Scoped(q *corev1.ResourceQuota) bool {
	return len(q.Spec.Scopes) > 0 || q.Spec.ScopeSelector != nil
}

// Names returns the names in q.spec.hard that count resource gr.
func Names(q *corev1.ResourceQuota, gr schema.GroupResource) []corev1.ResourceName {
	if Scoped(q) {
		return nil
	}
	var out []corev1.ResourceName
	for name := range q.Spec.Hard {
		if r, ok := ResourceOf(name); ok && r == gr {
			out = append(out, name)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// Counter counts the objects of gr in one cluster: in namespace, or in
// the whole cluster for "". A cluster-scoped resource counts 0 inside a
// namespace; a resource the cluster does not serve counts 0.
type Counter func(ctx context.Context, cluster, namespace string, gr schema.GroupResource) (int64, error)

// Scope is the namespace Counter gets for q: "" for a cluster-scoped quota.
func Scope(q *corev1.ResourceQuota) string {
	if ClusterScoped(q) {
		return ""
	}
	return q.Namespace
}

// Usage computes q's status.used in cluster: every name of spec.hard it
// can count.
func Usage(ctx context.Context, count Counter, cluster string, q *corev1.ResourceQuota) (corev1.ResourceList, error) {
	used := corev1.ResourceList{}
	for name := range q.Spec.Hard {
		if !Tracked(name) {
			continue
		}
		gr, ok := ResourceOf(name)
		if !ok {
			used[name] = zero.DeepCopy()
			continue
		}
		var n int64
		if !Scoped(q) {
			var err error
			if n, err = count(ctx, cluster, Scope(q), gr); err != nil {
				return nil, fmt.Errorf("counting %s: %w", gr, err)
			}
		}
		used[name] = *resource.NewQuantity(n, resource.DecimalSI)
	}
	return used, nil
}

// Format prints a list the way kube's quota messages do: a=1,b=2.
func Format(l corev1.ResourceList) string {
	parts := make([]string, 0, len(l))
	for name, q := range l {
		parts = append(parts, fmt.Sprintf("%s=%s", name, q.String()))
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}
