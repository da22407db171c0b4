package account

import (
	"context"
	"fmt"
	"time"

	tenancyv1alpha1 "github.com/kcp-dev/sdk/apis/tenancy/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/log"

	corev1alpha1 "github.com/meshplane/meshplane/apis/core/v1alpha1"
)

// deletionStep deletes the Account's workspace, waits until it is gone,
// then deletes an organization's WorkspaceTypes.
type deletionStep struct {
	getWorkspace    func(ctx context.Context, cluster, name string) (*tenancyv1alpha1.Workspace, error)
	deleteWorkspace func(ctx context.Context, cluster, name string) error
	deleteType      func(ctx context.Context, cluster, name string) error
}

func (s *deletionStep) reconcile(ctx context.Context, st *state) result {
	acc := st.account
	ws, err := s.getWorkspace(ctx, st.cluster, acc.Name)
	switch {
	case gone(err):
	case err != nil:
		return s.failed(ctx, acc, fmt.Errorf("reading workspace %s: %w", acc.Name, err))
	case !ownedBy(ws, acc):
		log.FromContext(ctx).Info("workspace of the same name is not this account's; leaving it", "workspace", ws.Name)
	default:
		if ws.DeletionTimestamp.IsZero() {
			if err := s.deleteWorkspace(ctx, st.cluster, ws.Name); err != nil && !gone(err) {
				return s.failed(ctx, acc, fmt.Errorf("deleting workspace %s: %w", ws.Name, err))
			}
			log.FromContext(ctx).Info("deleting workspace", "workspace", ws.Name)
		}
		setReady(acc, "False", corev1alpha1.ReasonDeleting, fmt.Sprintf("waiting for workspace %s to be deleted", ws.Name))
		return wait(time.Second)
	}
	if acc.Spec.Type == corev1alpha1.AccountTypeOrg {
		for _, name := range []string{OrgTypeName(acc.Name), AccountTypeName(acc.Name)} {
			if err := s.deleteType(ctx, st.cluster, name); err != nil && !gone(err) {
				return s.failed(ctx, acc, fmt.Errorf("deleting workspace type %s: %w", name, err))
			}
		}
	}
	return next
}

func (s *deletionStep) failed(ctx context.Context, acc *corev1alpha1.Account, err error) result {
	log.FromContext(ctx).Error(err, "deleting account")
	setReady(acc, "False", corev1alpha1.ReasonDeleting, err.Error())
	return wait(5 * time.Second)
}

// ownedBy: the workspace was made for this Account (or carries no owner,
// as one made before owner references were set).
func ownedBy(ws *tenancyv1alpha1.Workspace, acc *corev1alpha1.Account) bool {
	if len(ws.OwnerReferences) == 0 {
		return true
	}
	for _, o := range ws.OwnerReferences {
		if o.Kind == corev1alpha1.AccountKind && o.Name == acc.Name && (o.UID == "" || o.UID == acc.UID) {
			return true
		}
	}
	return false
}
