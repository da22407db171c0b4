package garbagecollector

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2"
)

// InvalidOwnerReason is the reason of kube's warning about an owner
// reference that cannot resolve in the dependent's namespace.
const InvalidOwnerReason = "OwnerRefInvalidNamespace"

// reportInvalidOwners tells, as kube's collector does with a Warning
// event on the dependent, of each owner reference of a cluster-scoped
// object to a namespaced kind: it can never resolve (the owner is kept as
// unresolvable, the object is not collected).
func (c *Controller) reportInvalidOwners(ctx context.Context, cluster string, obj runtime.Object, refs []metav1.OwnerReference) {
	if c.InvalidOwner == nil {
		return
	}
	for _, ref := range refs {
		kind, ok := c.Lookup(cluster, groupKindOf(ref))
		if !ok || !kind.Namespaced {
			continue
		}
		message := fmt.Sprintf("ownerRef [%s/%s, namespace: %s, name: %s, uid: %s] does not exist in namespace %q", ref.APIVersion, ref.Kind, "", ref.Name, ref.UID, "")
		if err := c.InvalidOwner(ctx, cluster, obj, ref, message); err != nil {
			klog.FromContext(ctx).Error(err, "Reporting an invalid owner reference", "owner", ref.Name)
		}
	}
}
