package apiexport

import (
	"context"
	"testing"

	apisv1alpha2 "github.com/kcp-dev/sdk/apis/apis/v1alpha2"
	"github.com/kcp-dev/sdk/apis/third_party/conditions/util/conditions"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/meshplane/meshplane/core/internal/apiexport"
)

func TestIdentityReconciler(t *testing.T) {
	withRef := func(hash string) *apisv1alpha2.APIExport {
		e := &apisv1alpha2.APIExport{ObjectMeta: metav1.ObjectMeta{Name: "widgets"},
			Spec: apisv1alpha2.APIExportSpec{Identity: &apisv1alpha2.Identity{SecretRef: &corev1.SecretReference{Namespace: "kcp-system", Name: "widgets"}}}}
		if hash != "" {
			e.Status.IdentityHash = hash
			conditions.MarkTrue(e, apisv1alpha2.APIExportIdentityValid)
		}
		return e
	}
	wantHash := apiexport.IdentityHash([]byte("secret-key"))
	tests := []struct {
		name         string
		export       *apisv1alpha2.APIExport
		wantSecret   bool // namespace and secret created
		wantSpecRef  bool // spec.identity written (and the step stops)
		wantStatus   bool // status.identityHash written
		wantContinue bool
	}{
		{name: "new export: secret and spec.identity", export: &apisv1alpha2.APIExport{ObjectMeta: metav1.ObjectMeta{Name: "widgets"}},
			wantSecret: true, wantSpecRef: true},
		{name: "identity referenced: hash written", export: withRef(""), wantStatus: true, wantContinue: true},
		{name: "hash current: nothing written", export: withRef(wantHash), wantContinue: true},
		{name: "hash stale: rewritten", export: withRef("old"), wantStatus: true, wantContinue: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ns *corev1.Namespace
			var secret *corev1.Secret
			var updated, status *apisv1alpha2.APIExport
			r := &identityReconciler{
				createNamespace: func(_ context.Context, _ string, n *corev1.Namespace) error { ns = n; return nil },
				createSecret:    func(_ context.Context, _ string, s *corev1.Secret) error { secret = s; return nil },
				getSecret: func(_ context.Context, _, namespace, name string) (*corev1.Secret, error) {
					if namespace != "kcp-system" || name != "widgets" {
						t.Errorf("read secret %s/%s, want kcp-system/widgets", namespace, name)
					}
					return &corev1.Secret{Data: map[string][]byte{"key": []byte("secret-key")}}, nil
				},
				update:       func(_ context.Context, _ string, e *apisv1alpha2.APIExport) error { updated = e; return nil },
				updateStatus: func(_ context.Context, _ string, e *apisv1alpha2.APIExport) error { status = e; return nil },
			}
			got, _, err := r.reconcile(context.Background(), "c1", tt.export)
			if err != nil {
				t.Fatalf("reconcile: %v", err)
			}
			if (got != nil) != tt.wantContinue {
				t.Errorf("returned export %v, want continue %v", got, tt.wantContinue)
			}
			if created := ns != nil && ns.Name == "kcp-system" && secret != nil && secret.Namespace == "kcp-system" &&
				secret.Name == "widgets" && len(secret.StringData["key"]) == 64; created != tt.wantSecret {
				t.Errorf("identity namespace %v and secret %v created, want %v", ns, secret, tt.wantSecret)
			}
			if wrote := updated != nil && updated.Spec.Identity.SecretRef.Name == "widgets"; wrote != tt.wantSpecRef {
				t.Errorf("spec.identity written = %v, want %v", updated, tt.wantSpecRef)
			}
			if wrote := status != nil && status.Status.IdentityHash == wantHash &&
				conditions.IsTrue(status, apisv1alpha2.APIExportIdentityValid); wrote != tt.wantStatus {
				t.Errorf("status written = %v, want hash %s: %v", status, wantHash, tt.wantStatus)
			}
		})
	}
}

// TestIdentityReconcilerMissingSecret checks kcp's answer to an identity
// secret that does not exist: IdentityValid False with reason
// IdentityVerificationFailed, no hash, and a recheck.
func TestIdentityReconcilerMissingSecret(t *testing.T) {
	var status *apisv1alpha2.APIExport
	r := &identityReconciler{
		getSecret: func(context.Context, string, string, string) (*corev1.Secret, error) {
			return nil, apierrors.NewNotFound(corev1.Resource("secrets"), "widgets")
		},
		updateStatus: func(_ context.Context, _ string, e *apisv1alpha2.APIExport) error { status = e; return nil },
	}
	export := &apisv1alpha2.APIExport{ObjectMeta: metav1.ObjectMeta{Name: "widgets"},
		Spec: apisv1alpha2.APIExportSpec{Identity: &apisv1alpha2.Identity{SecretRef: &corev1.SecretReference{Namespace: "default", Name: "widgets"}}}}
	got, requeue, err := r.reconcile(context.Background(), "c1", export)
	if err != nil || got != nil || requeue == 0 {
		t.Fatalf("reconcile: export %v, requeue %v, err %v; want no export, a recheck, no error", got, requeue, err)
	}
	if status == nil || conditions.GetReason(status, apisv1alpha2.APIExportIdentityValid) != apisv1alpha2.IdentityVerificationFailedReason ||
		!conditions.IsFalse(status, apisv1alpha2.APIExportIdentityValid) || status.Status.IdentityHash != "" {
		t.Fatalf("status written: %v, want IdentityValid False, reason IdentityVerificationFailed", status)
	}
	// Unchanged: not written again.
	written := status
	status = nil
	if _, _, err := r.reconcile(context.Background(), "c1", written); err != nil || status != nil {
		t.Fatalf("reconcile of the unchanged failure: err %v, status written again %v", err, status != nil)
	}
}
