package security

import (
	"context"
	"errors"
	"testing"

	corev1alpha1 "github.com/meshplane/meshplane/apis/core/v1alpha1"
)

// TestAccountInfoOfAnotherWorkspace: an AccountInfo in bob's workspace that
// names alice's organization account and store (as a tampered one would)
// makes the initializer write nothing and the terminator delete nothing;
// the genuine one's tuples are deleted, also once its Workspace is gone.
func TestAccountInfoOfAnotherWorkspace(t *testing.T) {
	info := &corev1alpha1.AccountInfo{Spec: corev1alpha1.AccountInfoSpec{
		Account: corev1alpha1.AccountLocation{Name: "alicecorp", OriginClusterID: "orgs", GeneratedClusterID: "alicecl"},
		FGA:     corev1alpha1.FGAInfo{Store: corev1alpha1.StoreInfo{ID: "ALICE"}},
	}}
	var writes, reads int
	workspaces := map[string]string{"orgs/alicecorp": "alicecl"}
	d := Deps{
		WorkspaceCluster: func(_ context.Context, cluster, name string) (string, bool, error) {
			c, ok := workspaces[cluster+"/"+name]
			return c, ok, nil
		},
		GetAccount: func(context.Context, string, string) (*corev1alpha1.Account, error) {
			return &corev1alpha1.Account{}, nil
		},
		ReadTuples: func(_ context.Context, _, object string) ([]corev1alpha1.Tuple, error) {
			reads++
			return []corev1alpha1.Tuple{{Object: object, Relation: "owner", User: "user:alice"}}, nil
		},
		WriteTuples: func(context.Context, string, []corev1alpha1.Tuple, []corev1alpha1.Tuple) error { writes++; return nil },
	}
	ctx := context.Background()

	if err := d.terminateAccount(ctx, "bobcl", info); err != nil || reads+writes != 0 {
		t.Fatalf("terminating bob's workspace: err %v, %d reads, %d writes of alice's store", err, reads, writes)
	}
	err := d.initAccount(ctx, nil, "bobcl", info)
	var w errWait
	if !errors.As(err, &w) || writes != 0 {
		t.Fatalf("initializing bob's workspace: err %v, %d writes; want a wait and nothing written", err, writes)
	}

	if err := d.terminateAccount(ctx, "alicecl", info); err != nil || writes != 1 || reads != 2 {
		t.Fatalf("terminating alice's own workspace: err %v, %d reads, %d writes; want her tuples deleted", err, reads, writes)
	}
	delete(workspaces, "orgs/alicecorp")
	if err := d.terminateAccount(ctx, "alicecl", info); err != nil || writes != 2 {
		t.Fatalf("terminating once the Workspace is gone: err %v, %d writes", err, writes)
	}
	if err := d.initAccount(ctx, nil, "alicecl", info); !errors.As(err, &w) {
		t.Fatalf("initializing without the account's Workspace: %v, want a wait", err)
	}
}
