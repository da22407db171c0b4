package security

import (
	"context"
	"errors"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"

	corev1alpha1 "github.com/meshplane/meshplane/apis/core/v1alpha1"
	"github.com/meshplane/meshplane/apis/fga"
)

// initAccount writes an account's tuples into its organization's store:
// its creator owns it (through its owner role) and its parent account is
// its parent. The AccountInfo gets the organization's store id if it
// lacks it.
func (d Deps) initAccount(ctx context.Context, c client.Client, cluster string, info *corev1alpha1.AccountInfo) error {
	if found, err := d.accountOfWorkspace(ctx, cluster, info); err != nil {
		var other errNotThisAccount
		if errors.As(err, &other) {
			// Nothing is written for an AccountInfo that is not this
			// workspace's: it waits (and says why) until it is.
			return waitFor("%s", other.msg)
		}
		return err
	} else if !found {
		return waitFor("the Workspace of account %s is not there", info.Spec.Account.Name)
	}
	storeID := info.Spec.FGA.Store.ID
	if storeID == "" {
		org := info.Spec.Organization
		st, err := d.GetStore(ctx, org.OriginClusterID, org.Name)
		if err != nil {
			return fmt.Errorf("reading Store %s of the organization: %w", org.Name, err)
		}
		if st.Status.StoreID == "" {
			return waitFor("Store %s has no OpenFGA store yet", org.Name)
		}
		storeID = st.Status.StoreID
		info.Spec.FGA.Store.ID = storeID
		if err := c.Update(ctx, info); err != nil {
			return fmt.Errorf("writing the store id into AccountInfo: %w", err)
		}
	}
	name, origin := info.Spec.Account.Name, info.Spec.Account.OriginClusterID
	acc, err := d.GetAccount(ctx, origin, name)
	if err != nil {
		return fmt.Errorf("reading Account %s in %s: %w", name, origin, err)
	}
	creator := ""
	if acc.Spec.Creator != nil {
		creator = *acc.Spec.Creator
	}
	var parentOrigin, parentName string
	if p := info.Spec.ParentAccount; p != nil {
		parentOrigin, parentName = p.OriginClusterID, p.Name
	}
	if err := d.WriteTuples(ctx, storeID, fga.AccountTuples(origin, name, creator, parentOrigin, parentName), nil); err != nil {
		return fmt.Errorf("writing the tuples of account %s: %w", name, err)
	}
	return nil
}
