package account

import (
	"context"
	"testing"

	tenancyv1alpha1 "github.com/kcp-dev/sdk/apis/tenancy/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	corev1alpha1 "github.com/meshplane/meshplane/apis/core/v1alpha1"
)

type delFixture struct {
	workspaces *objects[*tenancyv1alpha1.Workspace]
	types      *objects[*tenancyv1alpha1.WorkspaceType]
	step       *deletionStep
}

func newDelFixture() *delFixture {
	f := &delFixture{workspaces: newObjects[*tenancyv1alpha1.Workspace](), types: newObjects[*tenancyv1alpha1.WorkspaceType]()}
	f.step = &deletionStep{getWorkspace: f.workspaces.get, deleteType: f.types.del,
		deleteWorkspace: func(_ context.Context, cluster, name string) error {
			// The core marks the workspace deleted; it goes later.
			ws := f.workspaces.items[cluster+"/"+name]
			now := metav1.Now()
			ws.DeletionTimestamp = &now
			f.workspaces.deleted = append(f.workspaces.deleted, name)
			return nil
		}}
	return f
}

func TestDeletionWaitsForWorkspaceThenDeletesTypes(t *testing.T) {
	f := newDelFixture()
	acc := org("acme")
	ws := readyWorkspace("acme", "c-acme")
	ws.OwnerReferences = []metav1.OwnerReference{{Kind: "Account", Name: "acme", UID: acc.UID}}
	f.workspaces.put("orgs", "acme", ws)
	f.types.put("orgs", "acme-org", &tenancyv1alpha1.WorkspaceType{})
	f.types.put("orgs", "acme-account", &tenancyv1alpha1.WorkspaceType{})
	st := &state{cluster: "orgs", account: acc}

	if res := f.step.reconcile(context.Background(), st); res.done {
		t.Fatal("done while the workspace exists")
	}
	if len(f.workspaces.deleted) != 1 {
		t.Fatalf("workspace deletions: %v", f.workspaces.deleted)
	}
	requireCondition(t, acc, corev1alpha1.ConditionReady, metav1.ConditionFalse, corev1alpha1.ReasonDeleting)
	if len(f.types.deleted) != 0 {
		t.Fatal("types deleted before the workspace is gone")
	}
	// Still terminating: no second delete call.
	f.step.reconcile(context.Background(), st)
	if len(f.workspaces.deleted) != 1 {
		t.Fatalf("deleted again: %v", f.workspaces.deleted)
	}
	// Gone: the types go, and the step is done.
	delete(f.workspaces.items, "orgs/acme")
	if res := f.step.reconcile(context.Background(), st); !res.done {
		t.Fatal("not done after the workspace is gone")
	}
	if len(f.types.items) != 0 {
		t.Fatalf("types left: %v", f.types.items)
	}
}

func TestDeletionNeverHangsOnWhatIsGone(t *testing.T) {
	f := newDelFixture()
	// Nothing exists any more: the step is done at once.
	st := &state{cluster: "orgs", account: org("acme")}
	if res := f.step.reconcile(context.Background(), st); !res.done {
		t.Fatalf("hangs on objects already gone: %+v", st.account.Status.Conditions)
	}
}

func TestDeletionLeavesForeignWorkspace(t *testing.T) {
	f := newDelFixture()
	ws := readyWorkspace("acme", "c-acme")
	ws.OwnerReferences = []metav1.OwnerReference{{Kind: "Account", Name: "acme", UID: "someone-else"}}
	f.workspaces.put("orgs", "acme", ws)
	st := &state{cluster: "orgs", account: org("acme")}
	if res := f.step.reconcile(context.Background(), st); !res.done || len(f.workspaces.deleted) != 0 {
		t.Fatalf("deleted a workspace owned by another account: %v", f.workspaces.deleted)
	}
}
