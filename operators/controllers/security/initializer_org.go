package security

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	corev1alpha1 "github.com/meshplane/meshplane/apis/core/v1alpha1"
	"github.com/meshplane/meshplane/apis/fga"
)

// initOrg gives an organization its Store, named after it in the cluster
// holding its Account (root:orgs), with the core module and the tuples
// that make the Account's creator its owner; once the store exists its id
// goes into the organization's AccountInfo.
func (d Deps) initOrg(ctx context.Context, c client.Client, cluster string, info *corev1alpha1.AccountInfo) error {
	org, origin := info.Spec.Account.Name, info.Spec.Account.OriginClusterID
	st, err := d.GetStore(ctx, origin, org)
	switch {
	case apierrors.IsNotFound(err):
		acc, err := d.GetAccount(ctx, origin, org)
		if err != nil {
			return fmt.Errorf("reading Account %s in %s: %w", org, origin, err)
		}
		creator := ""
		if acc.Spec.Creator != nil {
			creator = *acc.Spec.Creator
		}
		st = &corev1alpha1.Store{
			ObjectMeta: metav1.ObjectMeta{Name: org, Annotations: map[string]string{OrgClusterAnnotation: cluster}},
			Spec: corev1alpha1.StoreSpec{
				CoreModule: d.CoreModule,
				Tuples:     fga.AccountTuples(origin, org, creator, "", ""),
			},
		}
		if err := d.CreateStore(ctx, origin, st); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating Store %s in %s: %w", org, origin, err)
		}
		return waitFor("Store %s created; waiting for its OpenFGA store", org)
	case err != nil:
		return fmt.Errorf("reading Store %s in %s: %w", org, origin, err)
	}
	if st.DeletionTimestamp != nil {
		return waitFor("Store %s of an earlier organization of that name is being deleted", org)
	}
	if oc := st.Annotations[OrgClusterAnnotation]; oc != "" && oc != cluster {
		return waitFor("Store %s belongs to organization cluster %s", org, oc)
	}
	if st.Status.StoreID == "" {
		return waitFor("Store %s has no OpenFGA store yet", org)
	}
	if info.Spec.FGA.Store.ID != st.Status.StoreID {
		info.Spec.FGA.Store.ID = st.Status.StoreID
		if err := c.Update(ctx, info); err != nil {
			return fmt.Errorf("writing the store id into AccountInfo: %w", err)
		}
	}
	return nil
}
