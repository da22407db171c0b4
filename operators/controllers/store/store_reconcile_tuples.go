package store

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/log"

	corev1alpha1 "github.com/meshplane/meshplane/apis/core/v1alpha1"
)

// tuplesStep writes the organization's ownership tuples, spec.tuples and
// the tuples of the AuthorizationModels in the model, and deletes the
// tuples it wrote before that are no longer wanted (never an ownership
// tuple); status.managedTuples records what it wrote.
type tuplesStep struct {
	// owners computes the ownership tuples (nil: none).
	owners *ownership
	write  func(ctx context.Context, storeID string, add, remove []corev1alpha1.Tuple) error
	// updateModel writes an AuthorizationModel's status (its managedTuples).
	updateModel func(ctx context.Context, cluster string, m *corev1alpha1.AuthorizationModel) error
	// migrator gives the tuples their ids in the current format.
	migrator *migrator
	// shared is set when Stores name the shared store: every tuple must
	// pass its organization's scope (scopeOf), else it is not written.
	shared bool
}

func (s *tuplesStep) reconcile(ctx context.Context, st *state) result {
	store := st.store
	want := map[corev1alpha1.Tuple]bool{}
	owned, err := s.owners.tuples(ctx, st)
	if err != nil {
		setCondition(store, corev1alpha1.ConditionTuplesWritten, metav1.ConditionFalse, corev1alpha1.ReasonError,
			fmt.Sprintf("reading the organization's Account: %v", err))
		return wait(5 * time.Second)
	}
	for _, t := range owned {
		want[t] = true
	}
	for _, t := range store.Spec.Tuples {
		want[s.migrator.current(ctx, t)] = true
	}
	for _, m := range st.models {
		for _, t := range m.Spec.Tuples {
			want[s.migrator.current(ctx, t)] = true
		}
	}
	var refused []string
	if s.shared {
		sc := scopeOf(st)
		for t := range want {
			if err := sc.Allows(t); err != nil {
				delete(want, t)
				refused = append(refused, err.Error())
			}
		}
		sort.Strings(refused)
	}
	had := map[corev1alpha1.Tuple]bool{}
	for _, t := range store.Status.ManagedTuples {
		had[t] = true
	}
	var add, remove []corev1alpha1.Tuple
	for t := range want {
		if !had[t] {
			add = append(add, t)
		}
	}
	// Ownership tuples are written once per process even when listed as
	// written: one lost earlier comes back.
	var reassert []corev1alpha1.Tuple
	if s.owners != nil {
		for _, t := range s.owners.unasserted(assertKey(st), owned) {
			if had[t] {
				reassert = append(reassert, t)
			}
		}
		add = append(add, reassert...)
	}
	for t := range had {
		if !want[t] {
			remove = append(remove, t)
		}
	}
	if len(add)+len(remove) > 0 {
		if err := s.write(ctx, store.Status.StoreID, sortTuples(add), sortTuples(remove)); err != nil {
			setCondition(store, corev1alpha1.ConditionTuplesWritten, metav1.ConditionFalse, corev1alpha1.ReasonError, err.Error())
			return wait(5 * time.Second)
		}
		log.FromContext(ctx).Info("tuples written", "storeId", store.Status.StoreID, "added", len(add), "deleted", len(remove))
	}
	if s.owners != nil {
		s.owners.markAsserted(assertKey(st), owned)
	}
	managed := make([]corev1alpha1.Tuple, 0, len(want))
	for t := range want {
		managed = append(managed, t)
	}
	store.Status.ManagedTuples = sortTuples(managed)
	if len(managed) == 0 {
		store.Status.ManagedTuples = nil
	}
	if len(refused) > 0 {
		log.FromContext(ctx).Info("tuples naming objects outside the organization refused", "refused", refused)
		setCondition(store, corev1alpha1.ConditionTuplesWritten, metav1.ConditionFalse, corev1alpha1.ReasonOtherOrganization,
			fmt.Sprintf("%d tuples written; %d refused, as they name objects outside the organization in the shared store: %s",
				len(managed), len(refused), strings.Join(refused, "; ")))
		return wait(resync)
	}
	setCondition(store, corev1alpha1.ConditionTuplesWritten, metav1.ConditionTrue, corev1alpha1.ReasonReconciled,
		fmt.Sprintf("%d tuples", len(managed)))
	// Each AuthorizationModel in the model lists the tuples written for it.
	for _, m := range st.models {
		want := sortTuples(append([]corev1alpha1.Tuple(nil), m.Spec.Tuples...))
		if len(want) == 0 {
			want = nil
		}
		if equality.Semantic.DeepEqual(want, m.Status.ManagedTuples) || s.updateModel == nil {
			continue
		}
		m.Status.ManagedTuples = want
		if err := s.updateModel(ctx, m.Annotations[ClusterAnnotation], m); err != nil && !gone(err) {
			log.FromContext(ctx).Error(err, "writing AuthorizationModel status", "authorizationModel", modelModuleName(m))
		}
	}
	return next
}

// assertKey keys the ownership tuples written by this process: the
// OpenFGA store and the Store (one store holds every organization's when
// shared).
func assertKey(st *state) string { return st.store.Status.StoreID + "/" + storeKey(st) }
