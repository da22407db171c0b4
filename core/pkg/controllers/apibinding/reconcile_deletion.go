package apibinding

import (
	"context"
	"fmt"
	"slices"

	apisv1alpha2 "github.com/kcp-dev/sdk/apis/apis/v1alpha2"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/klog/v2"

	"github.com/meshplane/meshplane/core/pkg/registry/builtin"
)

// deletionReconciler deletes the objects of a deleted binding's resources
// in the consumer, stops serving them and releases the binding.
type deletionReconciler struct {
	bound     func(cluster, binding string) []*apiextensionsv1.CustomResourceDefinition
	deleteAll func(ctx context.Context, cluster string, def *apiextensionsv1.CustomResourceDefinition) error
	forget    func(cluster, binding string)
	update    func(ctx context.Context, cluster string, b *apisv1alpha2.APIBinding) error
}

func (r *deletionReconciler) reconcile(ctx context.Context, cluster string, b *apisv1alpha2.APIBinding) error {
	for _, def := range r.bound(cluster, b.Name) {
		klog.FromContext(ctx).V(2).Info("Deleting objects of unbound resource", "resource", def.Name)
		if err := r.deleteAll(ctx, cluster, def); err != nil {
			return fmt.Errorf("deleting %s: %w", def.Name, err)
		}
	}
	r.forget(cluster, b.Name)
	if !slices.Contains(b.Finalizers, builtin.BindingFinalizer) {
		return nil
	}
	b = b.DeepCopy()
	b.Finalizers = slices.DeleteFunc(b.Finalizers, func(f string) bool { return f == builtin.BindingFinalizer })
	if err := r.update(ctx, cluster, b); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	return nil
}
