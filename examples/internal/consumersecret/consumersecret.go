// Package consumersecret writes a provider's Secret into a consumer's
// namespace through the APIExport virtual workspace, which serves secrets
// there only when the consumer's APIBinding accepted the export's
// permission claim on them. It tells that case (ClaimNotAccepted) from
// other errors, and never touches a Secret the provider did not write
// (the managed-by label tells).
package consumersecret

import (
	"context"
	"errors"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// LabelManagedBy marks the Secrets a provider wrote.
const LabelManagedBy = "app.kubernetes.io/managed-by"

// ErrClaimNotAccepted: the consumer's binding does not accept the claim.
var ErrClaimNotAccepted = errors.New("the APIBinding does not accept the export's permission claim on secrets")

// ErrNotManaged: a Secret of that name exists and was not written by the
// provider; it is left alone.
var ErrNotManaged = errors.New("a Secret of that name exists and was not written by the provider; it is left alone")

// Get returns the Secret ns/name when managedBy wrote it; nil when there is
// none. ErrNotManaged if another one has the name; ErrClaimNotAccepted
// (wrapped) when secrets are not reachable.
func Get(ctx context.Context, cs kubernetes.Interface, ns, name, managedBy string) (*corev1.Secret, error) {
	got, err := cs.CoreV1().Secrets(ns).Get(ctx, name, metav1.GetOptions{})
	switch {
	case err == nil && got.Labels[LabelManagedBy] != managedBy:
		return nil, ErrNotManaged
	case err == nil:
		return got, nil
	case apierrors.IsNotFound(err) && objectNotFound(err):
		return nil, nil
	default:
		return nil, classify(err)
	}
}

// Apply creates or updates want (its Namespace and Name set), labelled as
// managedBy's, unless another Secret has the name (ErrNotManaged).
func Apply(ctx context.Context, cs kubernetes.Interface, want *corev1.Secret, managedBy string) error {
	got, err := Get(ctx, cs, want.Namespace, want.Name, managedBy)
	if err != nil {
		return err
	}
	want = want.DeepCopy()
	if want.Labels == nil {
		want.Labels = map[string]string{}
	}
	want.Labels[LabelManagedBy] = managedBy
	api := cs.CoreV1().Secrets(want.Namespace)
	if got == nil {
		_, err = api.Create(ctx, want, metav1.CreateOptions{})
		return classify(err)
	}
	if equalData(got.Data, want.Data) && got.Type == want.Type {
		return nil
	}
	got.Data = want.Data
	_, err = api.Update(ctx, got, metav1.UpdateOptions{})
	return classify(err)
}

// Delete removes ns/name if managedBy wrote it. Unreachable secrets (no
// accepted claim) and a missing or foreign Secret are no error.
func Delete(ctx context.Context, cs kubernetes.Interface, ns, name, managedBy string) error {
	got, err := Get(ctx, cs, ns, name, managedBy)
	if got == nil {
		if errors.Is(err, ErrClaimNotAccepted) || errors.Is(err, ErrNotManaged) {
			return nil
		}
		return err
	}
	if err := cs.CoreV1().Secrets(ns).Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	return nil
}

// classify wraps the errors of a virtual workspace that does not serve or
// allow secrets in this consumer as ErrClaimNotAccepted.
func classify(err error) error {
	if err == nil {
		return nil
	}
	if apierrors.IsForbidden(err) || apierrors.IsMethodNotSupported(err) || (apierrors.IsNotFound(err) && !objectNotFound(err)) {
		return errors.Join(ErrClaimNotAccepted, err)
	}
	return err
}

// objectNotFound tells a missing Secret (the details name it) from a
// resource that is not served.
func objectNotFound(err error) bool {
	var st apierrors.APIStatus
	if !errors.As(err, &st) || st.Status().Details == nil {
		return false
	}
	d := st.Status().Details
	return d.Kind == "secrets" && d.Name != ""
}

func equalData(a, b map[string][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || string(w) != string(v) {
			return false
		}
	}
	return true
}
