package account

import (
	"context"
	"fmt"

	tenancyv1alpha1 "github.com/kcp-dev/sdk/apis/tenancy/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/log"

	corev1alpha1 "github.com/meshplane/meshplane/apis/core/v1alpha1"
)

// OrgTypeName and AccountTypeName are an organization's WorkspaceTypes.
func OrgTypeName(org string) string     { return org + "-org" }
func AccountTypeName(org string) string { return org + "-account" }

// workspaceTypeStep creates an organization's WorkspaceTypes <org>-org and
// <org>-account in the workspace the org Account is in (root:orgs).
type workspaceTypeStep struct {
	// orgsPath is the workspace organizations live in, root:orgs.
	orgsPath string
	// basePath is where the base types org and account are, root.
	basePath string

	// pathOf returns a logical cluster's workspace path, once known; nil
	// skips the check that organizations are created in orgsPath.
	pathOf func(cluster string) (string, bool)

	// getAccountInfo reads an AccountInfo; nil skips the check that an org
	// is not created inside an account workspace.
	getAccountInfo func(ctx context.Context, cluster, name string) (*corev1alpha1.AccountInfo, error)

	getType    func(ctx context.Context, cluster, name string) (*tenancyv1alpha1.WorkspaceType, error)
	createType func(ctx context.Context, cluster string, wt *tenancyv1alpha1.WorkspaceType) error
}

func (s *workspaceTypeStep) reconcile(ctx context.Context, st *state) result {
	acc := st.account
	if acc.Spec.Type != corev1alpha1.AccountTypeOrg {
		return done(acc, corev1alpha1.ConditionWorkspaceTypeReady, "accounts use their organization's workspace types")
	}
	// An organization lives in root:orgs: not in a workspace whose path
	// says otherwise (known once the provider has looked it up), and not in
	// an account workspace (one holding an AccountInfo).
	where := ""
	if s.pathOf != nil {
		if path, ok := s.pathOf(st.cluster); ok && path != s.orgsPath {
			where = path
		}
	}
	if where == "" && s.getAccountInfo != nil {
		info, err := s.getAccountInfo(ctx, st.cluster, corev1alpha1.AccountInfoName)
		switch {
		case err == nil:
			where = "the account workspace " + info.Spec.Account.Path
		case !apierrors.IsNotFound(err):
			return failed(ctx, acc, corev1alpha1.ConditionWorkspaceTypeReady, fmt.Errorf("checking where the organization is: %w", err))
		}
	}
	if where != "" {
		setCondition(acc, corev1alpha1.ConditionWorkspaceTypeReady, metav1.ConditionFalse, corev1alpha1.ReasonError,
			fmt.Sprintf("an organization (type org) can only be created in %s, not in %s; create an Account of type account there", s.orgsPath, where))
		return wait(0) // nothing to retry: the Account must be recreated
	}
	st.org = acc.Name
	for _, want := range s.types(acc.Name) {
		_, err := s.getType(ctx, st.cluster, want.Name)
		if apierrors.IsNotFound(err) {
			err = s.createType(ctx, st.cluster, want)
			if err == nil {
				log.FromContext(ctx).Info("created workspace type", "workspaceType", want.Name)
			}
			if apierrors.IsAlreadyExists(err) {
				err = nil
			}
		}
		if err != nil {
			return failed(ctx, acc, corev1alpha1.ConditionWorkspaceTypeReady, fmt.Errorf("workspace type %s: %w", want.Name, err))
		}
	}
	return done(acc, corev1alpha1.ConditionWorkspaceTypeReady,
		fmt.Sprintf("workspace types %s and %s exist in %s", OrgTypeName(acc.Name), AccountTypeName(acc.Name), s.orgsPath))
}

// types are the two WorkspaceTypes of an organization.
func (s *workspaceTypeStep) types(org string) []*tenancyv1alpha1.WorkspaceType {
	labels := map[string]string{corev1alpha1.OrganizationLabelKey: org}
	accountType := &tenancyv1alpha1.WorkspaceTypeReference{Name: tenancyv1alpha1.WorkspaceTypeName(AccountTypeName(org)), Path: s.orgsPath}
	return []*tenancyv1alpha1.WorkspaceType{
		{
			ObjectMeta: metav1.ObjectMeta{Name: OrgTypeName(org), Labels: labels},
			Spec: tenancyv1alpha1.WorkspaceTypeSpec{
				Extend:                    tenancyv1alpha1.WorkspaceTypeExtension{With: []tenancyv1alpha1.WorkspaceTypeReference{{Name: "org", Path: s.basePath}}},
				DefaultChildWorkspaceType: accountType,
				LimitAllowedParents: &tenancyv1alpha1.WorkspaceTypeSelector{
					Types: []tenancyv1alpha1.WorkspaceTypeReference{{Name: "orgs", Path: s.basePath}},
				},
			},
		},
		{
			ObjectMeta: metav1.ObjectMeta{Name: AccountTypeName(org), Labels: labels},
			Spec: tenancyv1alpha1.WorkspaceTypeSpec{
				Extend:                    tenancyv1alpha1.WorkspaceTypeExtension{With: []tenancyv1alpha1.WorkspaceTypeReference{{Name: "account", Path: s.basePath}}},
				DefaultChildWorkspaceType: accountType,
			},
		},
	}
}
