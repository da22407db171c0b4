package serviceaccount

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
)

// tokenSecretReconciler fills a legacy token Secret (type
// kubernetes.io/service-account-token, annotation
// kubernetes.io/service-account.name) with a token of its ServiceAccount,
// the CA and the namespace, and records the ServiceAccount's UID; it
// deletes the Secret once the ServiceAccount is gone or was re-created,
// as kube's token controller does.
type tokenSecretReconciler struct {
	caPEM             []byte
	getServiceAccount func(ctx context.Context, cluster, namespace, name string) (*corev1.ServiceAccount, error)
	mint              LegacyMinter
	update            func(ctx context.Context, cluster string, s *corev1.Secret) error
	delete            func(ctx context.Context, cluster string, s *corev1.Secret) error
}

func (r *tokenSecretReconciler) reconcile(ctx context.Context, cluster string, s *corev1.Secret) error {
	logger := klog.FromContext(ctx)
	name := s.Annotations[corev1.ServiceAccountNameKey]
	if name == "" {
		return nil
	}
	sa, err := r.getServiceAccount(ctx, cluster, s.Namespace, name)
	if err != nil {
		return err
	}
	uid := s.Annotations[corev1.ServiceAccountUIDKey]
	if sa == nil || sa.DeletionTimestamp != nil || (uid != "" && uid != string(sa.UID)) {
		logger.V(2).Info("Deleting the token Secret of a ServiceAccount that is gone", "serviceAccount", name)
		return r.delete(ctx, cluster, s)
	}
	if uid == string(sa.UID) && len(s.Data[corev1.ServiceAccountTokenKey]) > 0 &&
		string(s.Data[corev1.ServiceAccountRootCAKey]) == string(r.caPEM) && string(s.Data[corev1.ServiceAccountNamespaceKey]) == s.Namespace {
		return nil
	}
	s = s.DeepCopy()
	if s.Annotations == nil {
		s.Annotations = map[string]string{}
	}
	s.Annotations[corev1.ServiceAccountUIDKey] = string(sa.UID)
	if s.Data == nil {
		s.Data = map[string][]byte{}
	}
	if len(s.Data[corev1.ServiceAccountTokenKey]) == 0 || uid != string(sa.UID) {
		token, err := r.mint(cluster, sa, s)
		if err != nil {
			return fmt.Errorf("minting the token of secret %s/%s: %w", s.Namespace, s.Name, err)
		}
		s.Data[corev1.ServiceAccountTokenKey] = []byte(token)
	}
	s.Data[corev1.ServiceAccountRootCAKey] = r.caPEM
	s.Data[corev1.ServiceAccountNamespaceKey] = []byte(s.Namespace)
	logger.V(2).Info("Filling a service account token Secret", "serviceAccount", name)
	return r.update(ctx, cluster, s)
}
