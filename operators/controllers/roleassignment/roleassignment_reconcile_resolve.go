package roleassignment

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/log"

	corev1alpha1 "github.com/meshplane/meshplane/apis/core/v1alpha1"
	"github.com/meshplane/meshplane/apis/fga"
)

// resolveStep finds the account and the organization's store from where
// the RoleAssignment lives: the AccountInfo of its logical cluster (written
// by the platform only), checked against the workspace tree (the
// Workspace of that account has this logical cluster). Nothing in the
// RoleAssignment names an account, an organization or a store.
type resolveStep struct {
	accountInfo      func(ctx context.Context, cluster string) (*corev1alpha1.AccountInfo, error)
	workspaceCluster func(ctx context.Context, cluster, name string) (string, bool, error)
}

func (r *resolveStep) reconcile(ctx context.Context, s *state) result {
	info, err := r.accountInfo(ctx, s.cluster)
	if err != nil && !gone(err) {
		setReady(s.ra, metav1.ConditionFalse, corev1alpha1.ReasonError, fmt.Sprintf("reading the workspace's AccountInfo: %v", err))
		return wait(5 * time.Second)
	}
	if info == nil || gone(err) {
		s.workspaceGone = true
		setReady(s.ra, metav1.ConditionFalse, corev1alpha1.ReasonPending,
			"this workspace is no organization or account workspace (it has no AccountInfo): a RoleAssignment grants a role on the account of the workspace it is in")
		return wait(30 * time.Second)
	}
	name, origin := info.Spec.Account.Name, info.Spec.Account.OriginClusterID
	got, found, err := r.workspaceCluster(ctx, origin, name)
	switch {
	case err != nil:
		setReady(s.ra, metav1.ConditionFalse, corev1alpha1.ReasonError, fmt.Sprintf("reading the Workspace of account %s: %v", name, err))
		return wait(5 * time.Second)
	case !found:
		s.workspaceGone = true
		setReady(s.ra, metav1.ConditionFalse, corev1alpha1.ReasonPending, fmt.Sprintf("the Workspace of account %s is not there", name))
		return wait(30 * time.Second)
	case got != s.cluster:
		log.FromContext(ctx).Info("AccountInfo names the account of another workspace; nothing granted",
			"account", name, "origin", origin, "accountWorkspaceCluster", got)
		setReady(s.ra, metav1.ConditionFalse, corev1alpha1.ReasonError, "the workspace's AccountInfo does not describe this workspace; nothing is granted")
		return wait(time.Minute)
	}
	if info.Spec.FGA.Store.ID == "" {
		setReady(s.ra, metav1.ConditionFalse, corev1alpha1.ReasonPending, "the organization's OpenFGA store is not known yet")
		return wait(5 * time.Second)
	}
	s.account, s.storeID = fga.AccountObject(origin, name), info.Spec.FGA.Store.ID
	return next
}
