package security

import (
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/log"

	corev1alpha1 "github.com/meshplane/meshplane/apis/core/v1alpha1"
)

// accountOfWorkspace checks, from the workspace tree, that the AccountInfo
// describes the workspace it is in: the Workspace of its Account (named
// after it, in the Account's cluster) has this logical cluster. An
// AccountInfo is written by the platform only; this keeps one that says
// otherwise (tampered with before that was so) from naming another
// organization's account, whose tuples the handlers write or delete.
// found is false when that Workspace is gone.
func (d Deps) accountOfWorkspace(ctx context.Context, cluster string, info *corev1alpha1.AccountInfo) (found bool, err error) {
	if d.WorkspaceCluster == nil {
		return true, nil
	}
	name, origin := info.Spec.Account.Name, info.Spec.Account.OriginClusterID
	got, found, err := d.WorkspaceCluster(ctx, origin, name)
	if err != nil {
		return false, fmt.Errorf("reading Workspace %s in %s: %w", name, origin, err)
	}
	if found && got != cluster {
		log.FromContext(ctx).Info("AccountInfo names the account of another workspace; leaving its tuples alone",
			"cluster", cluster, "account", name, "origin", origin, "accountWorkspaceCluster", got)
		return true, errNotThisAccount{fmt.Sprintf("AccountInfo names account %s in %s, whose workspace is %s, not %s", name, origin, got, cluster)}
	}
	return found, nil
}

// errNotThisAccount is an AccountInfo that describes another workspace.
type errNotThisAccount struct{ msg string }

func (e errNotThisAccount) Error() string { return e.msg }
