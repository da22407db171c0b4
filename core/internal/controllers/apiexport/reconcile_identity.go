package apiexport

import (
	"context"
	"fmt"
	"time"

	apisv1alpha2 "github.com/kcp-dev/sdk/apis/apis/v1alpha2"
	conditionsv1alpha1 "github.com/kcp-dev/sdk/apis/third_party/conditions/apis/conditions/v1alpha1"
	"github.com/kcp-dev/sdk/apis/third_party/conditions/util/conditions"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	"github.com/meshplane/meshplane/core/internal/apiexport"
)

// identityReconciler gives an export its identity: a secret key in
// kcp-system/<name>, spec.identity pointing at it, and the key's hash in
// status.identityHash.
type identityReconciler struct {
	createNamespace func(ctx context.Context, cluster string, ns *corev1.Namespace) error
	createSecret    func(ctx context.Context, cluster string, s *corev1.Secret) error
	getSecret       func(ctx context.Context, cluster, namespace, name string) (*corev1.Secret, error)
	update          func(ctx context.Context, cluster string, e *apisv1alpha2.APIExport) error
	updateStatus    func(ctx context.Context, cluster string, e *apisv1alpha2.APIExport) error
}

// identityRecheck is how soon an export whose identity secret is missing
// is looked at again.
const identityRecheck = 2 * time.Second

// reconcile returns the export as it now stands, or nil after writing its
// spec (the write brings the export back to the queue) or while its
// identity secret is missing (condition IdentityValid False with reason
// IdentityVerificationFailed, as kcp; requeue says when to look again).
func (r *identityReconciler) reconcile(ctx context.Context, cluster string, export *apisv1alpha2.APIExport) (_ *apisv1alpha2.APIExport, requeue time.Duration, _ error) {
	name := export.Name
	if export.Spec.Identity == nil || export.Spec.Identity.SecretRef == nil {
		klog.FromContext(ctx).V(2).Info("Creating export identity", "secret", apiexport.IdentityNamespace+"/"+name)
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: apiexport.IdentityNamespace}}
		if err := r.createNamespace(ctx, cluster, ns); err != nil && !apierrors.IsAlreadyExists(err) {
			return nil, 0, err
		}
		secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: apiexport.IdentityNamespace},
			StringData: map[string]string{"key": apiexport.NewIdentityKey()}}
		if err := r.createSecret(ctx, cluster, secret); err != nil && !apierrors.IsAlreadyExists(err) {
			return nil, 0, err
		}
		export = export.DeepCopy()
		export.Spec.Identity = &apisv1alpha2.Identity{SecretRef: &corev1.SecretReference{Namespace: apiexport.IdentityNamespace, Name: name}}
		return nil, 0, r.update(ctx, cluster, export)
	}
	ref := export.Spec.Identity.SecretRef
	secret, err := r.getSecret(ctx, cluster, ref.Namespace, ref.Name)
	if apierrors.IsNotFound(err) {
		msg := fmt.Sprintf("identity secret %s/%s not found", ref.Namespace, ref.Name)
		if c := conditions.Get(export, apisv1alpha2.APIExportIdentityValid); c == nil || c.Reason != apisv1alpha2.IdentityVerificationFailedReason || c.Message != msg {
			export = export.DeepCopy()
			conditions.MarkFalse(export, apisv1alpha2.APIExportIdentityValid, apisv1alpha2.IdentityVerificationFailedReason,
				conditionsv1alpha1.ConditionSeverityError, "%s", msg)
			if err := r.updateStatus(ctx, cluster, export); err != nil {
				return nil, 0, err
			}
		}
		return nil, identityRecheck, nil
	}
	if err != nil {
		return nil, 0, err
	}
	hash := apiexport.IdentityHash(secret.Data["key"])
	if export.Status.IdentityHash != hash || !conditions.IsTrue(export, apisv1alpha2.APIExportIdentityValid) {
		export = export.DeepCopy()
		export.Status.IdentityHash = hash
		conditions.MarkTrue(export, apisv1alpha2.APIExportIdentityValid)
		if err := r.updateStatus(ctx, cluster, export); err != nil {
			return nil, 0, err
		}
	}
	return export, 0, nil
}
