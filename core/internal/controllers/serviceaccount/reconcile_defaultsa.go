package serviceaccount

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
)

// defaultServiceAccountReconciler creates a namespace's `default`
// ServiceAccount when it is missing (also after somebody deleted it).
type defaultServiceAccountReconciler struct {
	exists func(cluster, namespace string) bool
	create func(ctx context.Context, cluster string, sa *corev1.ServiceAccount) error
}

func (r *defaultServiceAccountReconciler) reconcile(ctx context.Context, cluster, namespace string) error {
	if r.exists(cluster, namespace) {
		return nil
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: DefaultServiceAccount, Namespace: namespace}}
	if err := r.create(ctx, cluster, sa); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	klog.FromContext(ctx).V(2).Info("Created the default ServiceAccount")
	return nil
}
