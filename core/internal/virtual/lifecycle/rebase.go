package lifecycle

import (
	"context"
	"slices"

	corev1alpha1 "github.com/kcp-dev/sdk/apis/core/v1alpha1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/meshplane/meshplane/core/internal/tenancy"
)

// RebaseRelease applies an initializer's removal of itself to the stored
// LogicalCluster when the client sent it on an older one. A workspace's
// initializers release it concurrently through their virtual workspaces,
// each writing the object it read minus its own initializer; whichever
// writes second used to get a conflict, read the object again and write
// again. The removals commute, so a status write through the initializing
// virtual workspace of id that differs from the stored object only in
// what the other initializers' removals changed (status.initializers, the
// lifecycle labels, the phase, resourceVersion and managedFields; and the
// request's kind and apiVersion) and
// lacks id is applied to the stored object instead: id removed, labels
// and phase settled as the logicalcluster admission does. Any other
// difference keeps the conflict. updated is returned unchanged when the
// rebase does not apply.
func RebaseRelease(ctx context.Context, current, updated runtime.Object) runtime.Object {
	t, ok := From(ctx)
	if !ok || t.Kind != Initializing {
		return updated
	}
	cur, ok1 := current.(*corev1alpha1.LogicalCluster)
	upd, ok2 := updated.(*corev1alpha1.LogicalCluster)
	if !ok1 || !ok2 || upd.ResourceVersion == "" || upd.ResourceVersion == cur.ResourceVersion ||
		cur.DeletionTimestamp != nil || cur.Status.Phase != corev1alpha1.LogicalClusterPhaseInitializing {
		return updated
	}
	id := corev1alpha1.LogicalClusterInitializer(t.ID)
	if !slices.Contains(cur.Status.Initializers, id) || slices.Contains(upd.Status.Initializers, id) {
		return updated
	}
	// The client's list is the one it read minus id; the stored one can
	// only have lost others since.
	for _, i := range cur.Status.Initializers {
		if i != id && !slices.Contains(upd.Status.Initializers, i) {
			return updated
		}
	}
	if !equality.Semantic.DeepEqual(withoutRelease(cur), withoutRelease(upd)) {
		return updated
	}
	out := cur.DeepCopy()
	out.Status.Initializers = slices.DeleteFunc(out.Status.Initializers, func(i corev1alpha1.LogicalClusterInitializer) bool { return i == id })
	tenancy.SettleInitializers(out)
	return out
}

// withoutRelease is lc without what releases of initializers change.
func withoutRelease(lc *corev1alpha1.LogicalCluster) *corev1alpha1.LogicalCluster {
	c := lc.DeepCopy()
	c.TypeMeta = metav1.TypeMeta{} // set on a decoded request, not on the stored object
	c.ResourceVersion, c.ManagedFields = "", nil
	c.Labels = tenancy.WithLifecycleLabels(c.Labels, nil, nil)
	c.Status.Initializers, c.Status.Phase = nil, ""
	return c
}
