package store

import (
	"context"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	corev1alpha1 "github.com/meshplane/meshplane/apis/core/v1alpha1"
	"github.com/meshplane/meshplane/apis/fga"
)

// ownership gives the tuples step the organization's own tuples: the org
// Account's creator owns it (through its owner role). They are computed
// from the Account named after the Store, next to it in root:orgs
// (spec.creator, set by admission and immutable), never from a list a
// grant edit can change: spec.tuples holds grants only, and removing a
// tuple from it never removes one of these.
type ownership struct {
	// creator reads the creator of the Account name in cluster.
	creator func(ctx context.Context, cluster, name string) (string, error)
	// asserted remembers, per OpenFGA store, the ownership tuples written
	// by this process: each is written once per process even if
	// status.managedTuples lists it, so a tuple lost before (a grant edit
	// of an earlier version, a crash) is back after a restart.
	asserted sync.Map // storeID -> corev1alpha1.Tuple set (map[Tuple]bool)
}

// tuples returns the organization's ownership tuples; none while its
// Account cannot be found (being deleted and gone, or not yet seen).
func (o *ownership) tuples(ctx context.Context, st *state) ([]corev1alpha1.Tuple, error) {
	if o == nil || o.creator == nil {
		return nil, nil
	}
	creator, err := o.creator(ctx, st.cluster, st.store.Name)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return fga.AccountTuples(st.cluster, st.store.Name, creator, "", ""), nil
}

// unasserted returns those of ts this process has not written into
// storeID yet.
func (o *ownership) unasserted(storeID string, ts []corev1alpha1.Tuple) []corev1alpha1.Tuple {
	done, _ := o.asserted.Load(storeID)
	seen, _ := done.(map[corev1alpha1.Tuple]bool)
	var out []corev1alpha1.Tuple
	for _, t := range ts {
		if !seen[t] {
			out = append(out, t)
		}
	}
	return out
}

// markAsserted records ts as written into storeID.
func (o *ownership) markAsserted(storeID string, ts []corev1alpha1.Tuple) {
	done, _ := o.asserted.Load(storeID)
	seen, _ := done.(map[corev1alpha1.Tuple]bool)
	next := make(map[corev1alpha1.Tuple]bool, len(seen)+len(ts))
	for t := range seen {
		next[t] = true
	}
	for _, t := range ts {
		next[t] = true
	}
	o.asserted.Store(storeID, next)
}
