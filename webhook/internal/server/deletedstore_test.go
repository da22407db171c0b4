package server

import (
	"context"
	"testing"
	"time"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// TestDeletedStoreAllowsNothing: OpenFGA's store delete is soft (a Check
// on a deleted store still answers from its tuples), so a store deleted
// without its tuples revoked first must still stop answering: the webhook
// verifies the store when it reads its model, and has no opinion once it
// is gone (here within the fixture's model refresh of 100 ms).
func TestDeletedStoreAllowsNothing(t *testing.T) {
	f := newFixture(t, 0)
	review := reviewOf("alice", "create", "configmaps", "default", "")
	if !f.allowed(t, review) {
		t.Fatal("the owner is not allowed before the store is deleted")
	}
	if err := f.admin.DeleteStore(context.Background(), f.store); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, 20*time.Second, 100*time.Millisecond, "no allowed answer from a deleted store", func() (bool, string) {
		st, _, _ := f.answer(t, review)
		return !st.Allowed, st.Reason
	})
}
