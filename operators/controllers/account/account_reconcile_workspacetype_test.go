package account

import (
	"context"
	"errors"
	"strings"
	"testing"

	tenancyv1alpha1 "github.com/kcp-dev/sdk/apis/tenancy/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	corev1alpha1 "github.com/meshplane/meshplane/apis/core/v1alpha1"
)

func typeStep(types *objects[*tenancyv1alpha1.WorkspaceType]) *workspaceTypeStep {
	return &workspaceTypeStep{orgsPath: "root:orgs", basePath: "root", getType: types.get,
		createType: func(_ context.Context, cluster string, wt *tenancyv1alpha1.WorkspaceType) error {
			if types.err != nil {
				return types.err
			}
			types.put(cluster, wt.Name, wt)
			types.created = append(types.created, wt.Name)
			return nil
		}}
}

func TestWorkspaceTypeStepCreatesOrgTypes(t *testing.T) {
	types := newObjects[*tenancyv1alpha1.WorkspaceType]()
	st := &state{cluster: "orgs", account: org("acme")}
	if res := typeStep(types).reconcile(context.Background(), st); !res.done {
		t.Fatalf("step not done: %+v", st.account.Status.Conditions)
	}
	requireCondition(t, st.account, corev1alpha1.ConditionWorkspaceTypeReady, metav1.ConditionTrue, corev1alpha1.ReasonReconciled)
	orgType, ok := types.items["orgs/acme-org"]
	if !ok {
		t.Fatalf("acme-org not created; created %v", types.created)
	}
	if orgType.Labels[corev1alpha1.OrganizationLabelKey] != "acme" {
		t.Errorf("acme-org labels = %v", orgType.Labels)
	}
	if w := orgType.Spec.Extend.With; len(w) != 1 || w[0].Name != "org" || w[0].Path != "root" {
		t.Errorf("acme-org extends %v, want root:org", w)
	}
	if d := orgType.Spec.DefaultChildWorkspaceType; d == nil || d.Name != "acme-account" || d.Path != "root:orgs" {
		t.Errorf("acme-org default child = %v", d)
	}
	if p := orgType.Spec.LimitAllowedParents; p == nil || len(p.Types) != 1 || p.Types[0].Name != "orgs" {
		t.Errorf("acme-org allowed parents = %v", p)
	}
	accType := types.items["orgs/acme-account"]
	if accType == nil || accType.Spec.Extend.With[0].Name != "account" {
		t.Fatalf("acme-account = %+v", accType)
	}
	if st.org != "acme" {
		t.Errorf("state org = %q", st.org)
	}

	// A second run creates nothing.
	types.created = nil
	typeStep(types).reconcile(context.Background(), st)
	if len(types.created) != 0 {
		t.Errorf("second run created %v", types.created)
	}
}

func TestWorkspaceTypeStepSkipsAccounts(t *testing.T) {
	types := newObjects[*tenancyv1alpha1.WorkspaceType]()
	st := &state{cluster: "acme", account: account("team-a")}
	if res := typeStep(types).reconcile(context.Background(), st); !res.done || len(types.items) != 0 {
		t.Fatalf("an account made types %v", types.items)
	}
	requireCondition(t, st.account, corev1alpha1.ConditionWorkspaceTypeReady, metav1.ConditionTrue, corev1alpha1.ReasonReconciled)
}

func TestWorkspaceTypeStepReportsErrors(t *testing.T) {
	types := newObjects[*tenancyv1alpha1.WorkspaceType]()
	types.err = errors.New("forbidden: no use")
	st := &state{cluster: "orgs", account: org("acme")}
	res := typeStep(types).reconcile(context.Background(), st)
	if res.done || res.requeueAfter == 0 {
		t.Fatalf("a failing step must stop and requeue: %+v", res)
	}
	c := requireCondition(t, st.account, corev1alpha1.ConditionWorkspaceTypeReady, metav1.ConditionFalse, corev1alpha1.ReasonError)
	if !strings.Contains(c.Message, "forbidden: no use") || !strings.Contains(c.Message, "acme-org") {
		t.Errorf("message %q does not say what failed", c.Message)
	}
}

func TestWorkspaceTypeStepOrgOnlyInOrgs(t *testing.T) {
	types := newObjects[*tenancyv1alpha1.WorkspaceType]()
	s := typeStep(types)
	paths := map[string]string{"orgs": "root:orgs", "c-acme": "root:orgs:acme"}
	s.pathOf = func(c string) (string, bool) { p, ok := paths[c]; return p, ok }

	st := &state{cluster: "c-acme", account: org("nested")}
	if res := s.reconcile(context.Background(), st); res.done {
		t.Fatal("an org inside an org was accepted")
	}
	c := requireCondition(t, st.account, corev1alpha1.ConditionWorkspaceTypeReady, metav1.ConditionFalse, corev1alpha1.ReasonError)
	if !strings.Contains(c.Message, "root:orgs:acme") || len(types.items) != 0 {
		t.Errorf("message %q, types %v", c.Message, types.items)
	}

	st = &state{cluster: "unknown", account: org("acme")}
	if res := s.reconcile(context.Background(), st); !res.done {
		t.Fatal("an org in a workspace whose path is not known yet is held up")
	}

	st = &state{cluster: "orgs", account: org("acme")}
	if res := s.reconcile(context.Background(), st); !res.done {
		t.Fatalf("an org in root:orgs refused: %+v", st.account.Status.Conditions)
	}
}

func TestWorkspaceTypeStepNoOrgInsideAccount(t *testing.T) {
	types := newObjects[*tenancyv1alpha1.WorkspaceType]()
	infos := newObjects[*corev1alpha1.AccountInfo]()
	s := typeStep(types)
	s.getAccountInfo = infos.get
	info := &corev1alpha1.AccountInfo{}
	info.Spec.Account.Path = "root:orgs:acme"
	infos.put("c-acme", "account", info)

	st := &state{cluster: "c-acme", account: org("nested")}
	if res := s.reconcile(context.Background(), st); res.done || len(types.items) != 0 {
		t.Fatal("an org inside an account workspace was accepted")
	}
	c := requireCondition(t, st.account, corev1alpha1.ConditionWorkspaceTypeReady, metav1.ConditionFalse, corev1alpha1.ReasonError)
	if !strings.Contains(c.Message, "root:orgs:acme") {
		t.Errorf("message %q does not say where", c.Message)
	}
	st = &state{cluster: "orgs", account: org("acme")}
	if res := s.reconcile(context.Background(), st); !res.done {
		t.Fatalf("an org in root:orgs (no AccountInfo) refused: %+v", st.account.Status.Conditions)
	}
}
