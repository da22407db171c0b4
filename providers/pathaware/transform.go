package pathaware

import (
	apisv1alpha1 "github.com/kcp-dev/sdk/apis/apis/v1alpha1"
	"k8s.io/apimachinery/pkg/api/meta"
	toolscache "k8s.io/client-go/tools/cache"
)

// StoreTransform is what the wildcard caches do to an object before they
// store it, unless Options.WildcardCache sets its own DefaultTransform:
// metadata.managedFields is dropped (no controller here reads it; the
// server keeps it on updates that do not send it), and an APIBinding's
// status keeps only its phase and conditions, what the provider reads (the
// bound resources and permission claims were half of the object).
// Read an APIBinding through a workspace's API reader for the rest.
func StoreTransform(obj any) (any, error) {
	if m, err := meta.Accessor(obj); err == nil && m.GetManagedFields() != nil {
		m.SetManagedFields(nil)
	}
	if b, ok := obj.(*apisv1alpha1.APIBinding); ok {
		b.Status = apisv1alpha1.APIBindingStatus{Phase: b.Status.Phase, Conditions: b.Status.Conditions}
	}
	return obj, nil
}

var _ toolscache.TransformFunc = StoreTransform
