package security

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/log"

	corev1alpha1 "github.com/meshplane/meshplane/apis/core/v1alpha1"
	"github.com/meshplane/meshplane/apis/fga"
)

// terminateOrg deletes the organization's Store (whose finalizer deletes
// the OpenFGA store). A Store already gone, or one made for another
// organization of the same name, is left alone.
func (d Deps) terminateOrg(ctx context.Context, cluster string, info *corev1alpha1.AccountInfo) error {
	org, origin := info.Spec.Account.Name, info.Spec.Account.OriginClusterID
	st, err := d.GetStore(ctx, origin, org)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading Store %s in %s: %w", org, origin, err)
	}
	if oc := st.Annotations[OrgClusterAnnotation]; oc != "" && oc != cluster {
		log.FromContext(ctx).Info("Store belongs to another organization of that name; leaving it", "store", org, "orgCluster", oc)
		return nil
	}
	if err := d.DeleteStore(ctx, origin, st); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting Store %s in %s: %w", org, origin, err)
	}
	return nil
}

// terminateAccount deletes the tuples of the account and of its owner
// role from the organization's store. A store that is gone, or tuples
// already deleted, count as done.
func (d Deps) terminateAccount(ctx context.Context, cluster string, info *corev1alpha1.AccountInfo) error {
	storeID := info.Spec.FGA.Store.ID
	if storeID == "" {
		return nil
	}
	// An AccountInfo naming another workspace's account deletes nothing
	// (and holds up no deletion); one whose Workspace is gone already is
	// the platform's own, and its tuples are deleted.
	if _, err := d.accountOfWorkspace(ctx, cluster, info); err != nil {
		var other errNotThisAccount
		if errors.As(err, &other) {
			return nil
		}
		return err
	}
	name, origin := info.Spec.Account.Name, info.Spec.Account.OriginClusterID
	var tuples []corev1alpha1.Tuple
	for _, object := range []string{fga.AccountObject(origin, name), fga.OwnerRole(origin, name)} {
		ts, err := d.ReadTuples(ctx, storeID, object)
		if err != nil {
			return fmt.Errorf("reading the tuples of %s: %w", object, err)
		}
		tuples = append(tuples, ts...)
	}
	if len(tuples) == 0 {
		return nil
	}
	if err := d.WriteTuples(ctx, storeID, nil, tuples); err != nil {
		return fmt.Errorf("deleting the %d tuples of account %s: %w", len(tuples), name, err)
	}
	log.FromContext(ctx).Info("account tuples deleted", "account", name, "tuples", len(tuples))
	return nil
}
