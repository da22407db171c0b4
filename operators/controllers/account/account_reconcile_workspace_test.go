package account

import (
	"context"
	"strings"
	"testing"

	tenancyv1alpha1 "github.com/kcp-dev/sdk/apis/tenancy/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	corev1alpha1 "github.com/meshplane/meshplane/apis/core/v1alpha1"
)

type wsFixture struct {
	workspaces *objects[*tenancyv1alpha1.Workspace]
	infos      *objects[*corev1alpha1.AccountInfo]
	step       *workspaceStep
}

func newWSFixture() *wsFixture {
	f := &wsFixture{workspaces: newObjects[*tenancyv1alpha1.Workspace](), infos: newObjects[*corev1alpha1.AccountInfo]()}
	f.step = &workspaceStep{orgsPath: "root:orgs", getWorkspace: f.workspaces.get, getAccountInfo: f.infos.get,
		createWorkspace: func(_ context.Context, cluster string, ws *tenancyv1alpha1.Workspace) error {
			f.workspaces.put(cluster, ws.Name, ws)
			f.workspaces.created = append(f.workspaces.created, cluster+"/"+ws.Name)
			return nil
		}}
	return f
}

func TestWorkspaceStepCreatesOrgWorkspace(t *testing.T) {
	f := newWSFixture()
	st := &state{cluster: "orgs", account: org("acme")}
	res := f.step.reconcile(context.Background(), st)
	if res.done || res.requeueAfter == 0 {
		t.Fatalf("a new workspace is not done yet: %+v", res)
	}
	requireCondition(t, st.account, corev1alpha1.ConditionWorkspaceCreated, metav1.ConditionFalse, corev1alpha1.ReasonPending)
	ws := f.workspaces.items["orgs/acme"]
	if ws == nil {
		t.Fatalf("no workspace created: %v", f.workspaces.created)
	}
	if *ws.Spec.Type != (tenancyv1alpha1.WorkspaceTypeReference{Name: "acme-org", Path: "root:orgs"}) {
		t.Errorf("type = %v", ws.Spec.Type)
	}
	if _, ok := ws.Annotations[tenancyv1alpha1.ExperimentalWorkspaceOwnerAnnotationKey]; ok {
		t.Errorf("the operator set the owner annotation (kcp records the requesting user): %v", ws.Annotations)
	}
	if len(ws.OwnerReferences) != 1 || ws.OwnerReferences[0].Kind != "Account" || ws.OwnerReferences[0].Name != "acme" {
		t.Errorf("owner references = %v", ws.OwnerReferences)
	}

	// Scheduled: done, and the workspace is handed to the next steps.
	ws.Spec.Cluster = "c-acme"
	res = f.step.reconcile(context.Background(), st)
	if !res.done || st.workspace == nil || st.workspace.Spec.Cluster != "c-acme" {
		t.Fatalf("scheduled workspace not accepted: %+v %+v", res, st.account.Status.Conditions)
	}
	requireCondition(t, st.account, corev1alpha1.ConditionWorkspaceCreated, metav1.ConditionTrue, corev1alpha1.ReasonReconciled)
	if len(f.workspaces.created) != 1 {
		t.Errorf("created %v, want one workspace", f.workspaces.created)
	}
}

func TestWorkspaceStepAccountUsesParentOrganization(t *testing.T) {
	f := newWSFixture()
	st := &state{cluster: "c-acme", account: account("team-a")}
	// No AccountInfo in the workspace yet: pending, nothing created.
	if res := f.step.reconcile(context.Background(), st); res.done {
		t.Fatal("done without the parent's AccountInfo")
	}
	requireCondition(t, st.account, corev1alpha1.ConditionWorkspaceCreated, metav1.ConditionFalse, corev1alpha1.ReasonPending)
	if len(f.workspaces.created) != 0 {
		t.Fatalf("created %v without knowing the organization", f.workspaces.created)
	}
	parent := &corev1alpha1.AccountInfo{}
	parent.Spec.Organization.Name = "acme"
	f.infos.put("c-acme", "account", parent)
	f.step.reconcile(context.Background(), st)
	ws := f.workspaces.items["c-acme/team-a"]
	if ws == nil || ws.Spec.Type.Name != "acme-account" || ws.Spec.Type.Path != "root:orgs" {
		t.Fatalf("workspace = %+v", ws)
	}
	if st.parent != parent || st.org != "acme" {
		t.Errorf("state parent/org not set: %+v %q", st.parent, st.org)
	}
}

// TestWorkspaceStepNotInDeletedWorkspace: while the workspace an account
// is in is being deleted (its AccountInfo is), a missing Workspace is not
// made again.
func TestWorkspaceStepNotInDeletedWorkspace(t *testing.T) {
	f := newWSFixture()
	parent := &corev1alpha1.AccountInfo{}
	parent.Spec.Organization.Name = "acme"
	now := metav1.Now()
	parent.DeletionTimestamp = &now
	f.infos.put("c-acme", "account", parent)
	st := &state{cluster: "c-acme", account: account("team-a")}
	if res := f.step.reconcile(context.Background(), st); res.done {
		t.Fatal("done in a workspace being deleted")
	}
	requireCondition(t, st.account, corev1alpha1.ConditionWorkspaceCreated, metav1.ConditionFalse, corev1alpha1.ReasonPending)
	if len(f.workspaces.created) != 0 {
		t.Fatalf("created %v in a workspace being deleted", f.workspaces.created)
	}
}

func TestWorkspaceStepWrongTypeIsAnError(t *testing.T) {
	f := newWSFixture()
	ws := readyWorkspace("acme", "c-acme")
	ws.Spec.Type = &tenancyv1alpha1.WorkspaceTypeReference{Name: "universal", Path: "root"}
	f.workspaces.put("orgs", "acme", ws)
	st := &state{cluster: "orgs", account: org("acme")}
	if res := f.step.reconcile(context.Background(), st); res.done {
		t.Fatal("a workspace of another type was accepted")
	}
	c := requireCondition(t, st.account, corev1alpha1.ConditionWorkspaceCreated, metav1.ConditionFalse, corev1alpha1.ReasonError)
	if !strings.Contains(c.Message, "root:universal") {
		t.Errorf("message %q does not name the type found", c.Message)
	}
}
