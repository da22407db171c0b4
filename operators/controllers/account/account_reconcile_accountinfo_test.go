package account

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/multicluster-runtime/pkg/multicluster"

	corev1alpha1 "github.com/meshplane/meshplane/apis/core/v1alpha1"
)

func infoStep(infos *objects[*corev1alpha1.AccountInfo]) *accountInfoStep {
	return &accountInfoStep{getAccountInfo: infos.get, clusterCA: "PEM",
		createAccountInfo: func(_ context.Context, cluster string, info *corev1alpha1.AccountInfo) error {
			infos.put(cluster, info.Name, info)
			infos.created = append(infos.created, cluster)
			return nil
		},
		updateAccountInfo: func(_ context.Context, cluster string, info *corev1alpha1.AccountInfo) error {
			infos.put(cluster, info.Name, info)
			return nil
		}}
}

func TestAccountInfoStepWaitsForInitialization(t *testing.T) {
	infos := newObjects[*corev1alpha1.AccountInfo]()
	ws := readyWorkspace("acme", "c-acme")
	ws.Status.Phase = "Scheduling"
	st := &state{cluster: "orgs", account: org("acme"), workspace: ws}
	if res := infoStep(infos).reconcile(context.Background(), st); res.done || len(infos.created) != 0 {
		t.Fatal("AccountInfo written before the workspace initializes")
	}
	requireCondition(t, st.account, corev1alpha1.ConditionAccountInfoReady, metav1.ConditionFalse, corev1alpha1.ReasonPending)
}

func TestAccountInfoStepOrg(t *testing.T) {
	infos := newObjects[*corev1alpha1.AccountInfo]()
	st := &state{cluster: "orgs", account: org("acme"), workspace: readyWorkspace("acme", "c-acme")}
	if res := infoStep(infos).reconcile(context.Background(), st); !res.done {
		t.Fatalf("not done: %+v", st.account.Status.Conditions)
	}
	info := infos.items["c-acme/account"]
	if info == nil {
		t.Fatal("no AccountInfo in the new workspace")
	}
	want := corev1alpha1.AccountLocation{Name: "acme", GeneratedClusterID: "c-acme", OriginClusterID: "orgs",
		Path: "root:orgs:acme", URL: "https://core/clusters/root:orgs:acme", Type: corev1alpha1.AccountTypeOrg}
	if info.Spec.Account != want || info.Spec.Organization != want || info.Spec.ParentAccount != nil {
		t.Errorf("org AccountInfo = %+v, want account = organization = %+v and no parent", info.Spec, want)
	}
	if info.Spec.ClusterInfo.CA != "PEM" {
		t.Errorf("clusterInfo.ca = %q", info.Spec.ClusterInfo.CA)
	}
	requireCondition(t, st.account, corev1alpha1.ConditionAccountInfoReady, metav1.ConditionTrue, corev1alpha1.ReasonReconciled)

	// An FGA store ID filled in later (by the security operator) is kept.
	info.Spec.FGA.Store.ID = "store-1"
	infoStep(infos).reconcile(context.Background(), st)
	if infos.items["c-acme/account"].Spec.FGA.Store.ID != "store-1" {
		t.Error("the store ID was overwritten")
	}
}

func TestAccountInfoStepAccountCopiesParent(t *testing.T) {
	infos := newObjects[*corev1alpha1.AccountInfo]()
	parent := &corev1alpha1.AccountInfo{}
	parent.Spec.Account = corev1alpha1.AccountLocation{Name: "acme", GeneratedClusterID: "c-acme", Path: "root:orgs:acme", Type: corev1alpha1.AccountTypeOrg}
	parent.Spec.Organization = parent.Spec.Account
	parent.Spec.FGA.Store.ID = "store-1"
	parent.Spec.ClusterInfo.CA = "PEM"
	ws := readyWorkspace("team-a", "c-team-a")
	ws.Spec.URL = "https://core/clusters/root:orgs:acme:team-a"
	st := &state{cluster: "c-acme", account: account("team-a"), workspace: ws, parent: parent, org: "acme"}
	infoStep(infos).reconcile(context.Background(), st)
	info := infos.items["c-team-a/account"]
	if info == nil {
		t.Fatal("no AccountInfo")
	}
	if info.Spec.Organization.Name != "acme" || info.Spec.ParentAccount == nil || info.Spec.ParentAccount.Name != "acme" {
		t.Errorf("organization/parent = %+v / %+v", info.Spec.Organization, info.Spec.ParentAccount)
	}
	if info.Spec.Account.Path != "root:orgs:acme:team-a" || info.Spec.Account.OriginClusterID != "c-acme" || info.Spec.Account.Type != corev1alpha1.AccountTypeAccount {
		t.Errorf("account = %+v", info.Spec.Account)
	}
	if info.Spec.FGA.Store.ID != "store-1" || info.Spec.ClusterInfo.CA != "PEM" {
		t.Errorf("store/CA not copied: %+v", info.Spec)
	}
}

func TestAccountInfoStepWaitsForBinding(t *testing.T) {
	infos := newObjects[*corev1alpha1.AccountInfo]()
	infos.err = multicluster.ErrClusterNotFound
	s := infoStep(infos)
	s.createAccountInfo = func(context.Context, string, *corev1alpha1.AccountInfo) error { return multicluster.ErrClusterNotFound }
	st := &state{cluster: "orgs", account: org("acme"), workspace: readyWorkspace("acme", "c-acme")}
	if res := s.reconcile(context.Background(), st); res.done || res.requeueAfter == 0 {
		t.Fatal("done although the workspace is not served yet")
	}
	requireCondition(t, st.account, corev1alpha1.ConditionAccountInfoReady, metav1.ConditionFalse, corev1alpha1.ReasonPending)
}
