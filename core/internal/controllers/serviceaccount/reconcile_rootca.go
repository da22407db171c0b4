package serviceaccount

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// rootCAReconciler keeps a namespace's kube-root-ca.crt ConfigMap holding
// exactly the server's CA under ca.crt, as kube's root CA publisher does.
type rootCAReconciler struct {
	caPEM  string
	get    func(cluster, namespace string) *corev1.ConfigMap
	create func(ctx context.Context, cluster string, cm *corev1.ConfigMap) error
	update func(ctx context.Context, cluster string, cm *corev1.ConfigMap) error
}

func (r *rootCAReconciler) reconcile(ctx context.Context, cluster, namespace string) error {
	cm := r.get(cluster, namespace)
	if cm == nil {
		cm = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: RootCAConfigMap, Namespace: namespace},
			Data: map[string]string{RootCAKey: r.caPEM}}
		if err := r.create(ctx, cluster, cm); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
		return nil
	}
	if len(cm.Data) == 1 && cm.Data[RootCAKey] == r.caPEM && len(cm.BinaryData) == 0 {
		return nil
	}
	cm = cm.DeepCopy()
	cm.Data = map[string]string{RootCAKey: r.caPEM}
	cm.BinaryData = nil
	return r.update(ctx, cluster, cm)
}
