package account

import (
	"context"
	"fmt"
	"time"

	tenancyv1alpha1 "github.com/kcp-dev/sdk/apis/tenancy/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/log"

	corev1alpha1 "github.com/meshplane/meshplane/apis/core/v1alpha1"
)

// workspaceStep creates the Account's Workspace, of its organization's
// type, with the Account's creator as the workspace's admin.
type workspaceStep struct {
	orgsPath string

	getWorkspace    func(ctx context.Context, cluster, name string) (*tenancyv1alpha1.Workspace, error)
	createWorkspace func(ctx context.Context, cluster string, ws *tenancyv1alpha1.Workspace) error
	getAccountInfo  func(ctx context.Context, cluster, name string) (*corev1alpha1.AccountInfo, error)
}

func (s *workspaceStep) reconcile(ctx context.Context, st *state) result {
	acc := st.account
	const cond = corev1alpha1.ConditionWorkspaceCreated
	typeName := OrgTypeName(acc.Name)
	if acc.Spec.Type != corev1alpha1.AccountTypeOrg {
		parent, err := s.getAccountInfo(ctx, st.cluster, corev1alpha1.AccountInfoName)
		if apierrors.IsNotFound(err) {
			return pending(acc, cond, 2*time.Second, "waiting for the AccountInfo %q of the workspace this account is in (an account must be created inside an organization or account workspace)", corev1alpha1.AccountInfoName)
		}
		if err != nil {
			return failed(ctx, acc, cond, fmt.Errorf("reading the parent's AccountInfo: %w", err))
		}
		if parent.Spec.Organization.Name == "" {
			return pending(acc, cond, 2*time.Second, "the parent's AccountInfo names no organization yet")
		}
		st.parent, st.org = parent, parent.Spec.Organization.Name
		typeName = AccountTypeName(st.org)
	}
	want := tenancyv1alpha1.WorkspaceTypeReference{Name: tenancyv1alpha1.WorkspaceTypeName(typeName), Path: s.orgsPath}

	ws, err := s.getWorkspace(ctx, st.cluster, acc.Name)
	if apierrors.IsNotFound(err) {
		if st.parent != nil && !st.parent.DeletionTimestamp.IsZero() {
			// The workspace this account is in is being torn down (its
			// AccountInfo goes with it): its Workspaces are deleted before
			// its Accounts are marked deleted; nothing is made again.
			return pending(acc, cond, 2*time.Second, "the workspace this account is in is being deleted; workspace %s is not created", acc.Name)
		}
		ws = s.workspace(acc, want)
		if err := s.createWorkspace(ctx, st.cluster, ws); err != nil && !apierrors.IsAlreadyExists(err) {
			return failed(ctx, acc, cond, fmt.Errorf("creating workspace %s of type %s: %w", acc.Name, want, err))
		}
		log.FromContext(ctx).Info("created workspace", "workspace", acc.Name, "type", want.String())
		return pending(acc, cond, time.Second, "workspace %s of type %s created, waiting for it to be scheduled", acc.Name, want)
	}
	if err != nil {
		return failed(ctx, acc, cond, fmt.Errorf("reading workspace %s: %w", acc.Name, err))
	}
	if ws.Spec.Type != nil && *ws.Spec.Type != want {
		return failed(ctx, acc, cond, fmt.Errorf("workspace %s exists with type %s, not %s", ws.Name, ws.Spec.Type, want))
	}
	if !ws.DeletionTimestamp.IsZero() {
		return pending(acc, cond, 2*time.Second, "workspace %s is being deleted", ws.Name)
	}
	if ws.Spec.Cluster == "" {
		return pending(acc, cond, time.Second, "workspace %s is being scheduled", ws.Name)
	}
	st.workspace = ws
	return done(acc, cond, fmt.Sprintf("workspace %s (logical cluster %s) of type %s", ws.Name, ws.Spec.Cluster, want))
}

// workspace is the Workspace made for acc. Its owner (kcp's
// experimental.tenancy.kcp.io/owner) is the operator, which created it: kcp
// records the requesting user unless the client is system:masters. The
// creator is made admin while the workspace initializes (initializeStep).
func (s *workspaceStep) workspace(acc *corev1alpha1.Account, t tenancyv1alpha1.WorkspaceTypeReference) *tenancyv1alpha1.Workspace {
	return &tenancyv1alpha1.Workspace{
		ObjectMeta: metav1.ObjectMeta{
			Name: acc.Name,
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: corev1alpha1.SchemeGroupVersion.String(), Kind: corev1alpha1.AccountKind, Name: acc.Name, UID: acc.UID,
			}},
		},
		Spec: tenancyv1alpha1.WorkspaceSpec{Type: &t},
	}
}
