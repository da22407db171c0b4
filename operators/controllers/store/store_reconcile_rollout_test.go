package store

import (
	"context"
	"os"
	"testing"

	openfgav1 "github.com/openfga/api/proto/openfga/v1"

	corev1alpha1 "github.com/meshplane/meshplane/apis/core/v1alpha1"
	"github.com/meshplane/meshplane/apis/fga"
)

// TestModelStepRollsOutTheCurrentCoreModule: a Store created by an earlier
// platform (its spec.coreModule the first core module, which let members
// delete Accounts) is written today's model, in which only owners delete.
func TestModelStepRollsOutTheCurrentCoreModule(t *testing.T) {
	old, err := os.ReadFile("../../../apis/fga/testdata/core-module-1.fga")
	if err != nil {
		t.Fatal(err)
	}
	var written *openfgav1.AuthorizationModel
	step := &modelStep{
		listModels: func(context.Context, func(*corev1alpha1.AuthorizationModel) bool) ([]corev1alpha1.AuthorizationModel, error) {
			return nil, nil
		},
		writeModel: func(_ context.Context, _, _ string, m *openfgav1.AuthorizationModel) (string, bool, error) {
			written = m
			return "M1", true, nil
		},
		updateModel: func(context.Context, string, *corev1alpha1.AuthorizationModel) error { return nil },
	}
	s := newState()
	s.store.Spec.CoreModule = string(old)
	s.store.Status.StoreID = "S1"
	if res := step.reconcile(context.Background(), s); !res.done {
		t.Fatalf("model step stopped: %v", s.store.Status.Conditions)
	}
	var account *openfgav1.TypeDefinition
	for _, td := range written.GetTypeDefinitions() {
		if td.GetType() == fga.AccountType {
			account = td
		}
	}
	if account == nil {
		t.Fatalf("written model has no %s type", fga.AccountType)
	}
	del := account.GetRelations()["delete"]
	if del == nil {
		t.Fatal("the account type has no delete relation")
	}
	for _, child := range del.GetUnion().GetChild() {
		if cu := child.GetComputedUserset(); cu != nil && cu.GetRelation() == fga.RelationMember {
			t.Fatalf("the written model still lets members delete accounts: the old core module was kept (%v)", del)
		}
	}
	if _, ok := account.GetRelations()["manage_iam_roles"]; !ok {
		t.Fatal("the written model lacks manage_iam_roles: it is not today's core module")
	}
}
