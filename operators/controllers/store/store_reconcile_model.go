package store

import (
	"context"
	"fmt"
	"sort"
	"time"

	openfgav1 "github.com/openfga/api/proto/openfga/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/log"

	corev1alpha1 "github.com/meshplane/meshplane/apis/core/v1alpha1"
	"github.com/meshplane/meshplane/apis/fga"
)

// ClusterAnnotation names an object's logical cluster.
const ClusterAnnotation = "kcp.io/cluster"

// modelStep composes the model, the Store's core module, every
// AuthorizationModel referencing the Store (oldest first) and the modules
// of the resources bound in the organization, and writes it when it
// differs from the store's current one. A module that does not fit (bad
// syntax, a type another module already defines) is left out and its
// AuthorizationModel says why; the others still apply.
type modelStep struct {
	// listModels lists every AuthorizationModel (each with its cluster in
	// ClusterAnnotation).
	listModels func(ctx context.Context) ([]corev1alpha1.AuthorizationModel, error)
	// boundResources lists the resources bound in the Store's
	// organization; nil means none.
	boundResources func(ctx context.Context, st *state) ([]fga.Resource, error)
	writeModel     func(ctx context.Context, storeID, currentID string, m *openfgav1.AuthorizationModel) (string, bool, error)
	updateModel    func(ctx context.Context, cluster string, m *corev1alpha1.AuthorizationModel) error
}

// references reports whether m names the Store.
func references(m *corev1alpha1.AuthorizationModel, st *state) bool {
	if m.Spec.StoreRef.Name != st.store.Name {
		return false
	}
	ref := m.Spec.StoreRef.Cluster
	if ref == "" {
		ref = m.Spec.StoreRef.Path
	}
	return ref == st.cluster || (st.path != "" && ref == st.path)
}

func modelModuleName(m *corev1alpha1.AuthorizationModel) string {
	return m.Annotations[ClusterAnnotation] + "/" + m.Name
}

func (s *modelStep) reconcile(ctx context.Context, st *state) result {
	store := st.store
	fail := func(reason, msg string, after time.Duration) result {
		setCondition(store, corev1alpha1.ConditionModelWritten, metav1.ConditionFalse, reason, msg)
		return wait(after)
	}
	all, err := s.listModels(ctx)
	if err != nil {
		return fail(corev1alpha1.ReasonError, fmt.Sprintf("listing AuthorizationModels: %v", err), 5*time.Second)
	}
	var refs []*corev1alpha1.AuthorizationModel
	for i := range all {
		if references(&all[i], st) && all[i].DeletionTimestamp.IsZero() {
			refs = append(refs, &all[i])
		}
	}
	// Oldest first: a module that was there keeps its types when a newer
	// one claims them too.
	sort.Slice(refs, func(i, j int) bool {
		a, b := refs[i], refs[j]
		if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
			return a.CreationTimestamp.Before(&b.CreationTimestamp)
		}
		return modelModuleName(a) < modelModuleName(b)
	})
	var modules []fga.Module
	for _, m := range refs {
		modules = append(modules, fga.Module{Name: modelModuleName(m), Contents: m.Spec.Model})
	}
	if s.boundResources != nil {
		rs, err := s.boundResources(ctx, st)
		if err != nil {
			if store.Status.AuthorizationModelID != "" {
				// Keep the model as it is rather than drop bound types.
				return fail(corev1alpha1.ReasonError, fmt.Sprintf("listing bound resources: %v", err), 5*time.Second)
			}
			// A new store gets its model now (tuples need one); the bound
			// types follow once they can be listed.
			log.FromContext(ctx).Info("writing the first model without bound resources", "reason", err.Error())
		}
		for _, r := range rs {
			if r.Validate() != nil {
				continue
			}
			modules = append(modules, fga.Module{Name: "bound/" + r.ModuleName(), Contents: fga.ResourceModule(r)})
		}
	}
	model, rejected, err := fga.ComposeSkipping(fga.Module{Name: fga.CoreModuleName, Contents: store.Spec.CoreModule}, modules)
	if err != nil {
		return fail(corev1alpha1.ReasonInvalidModel, err.Error(), resync)
	}
	for name, why := range rejected {
		log.FromContext(ctx).Info("module left out of the model", "module", name, "reason", why.Error())
	}

	id, wrote, err := s.writeModel(ctx, store.Status.StoreID, store.Status.AuthorizationModelID, model)
	if err != nil {
		return fail(corev1alpha1.ReasonError, err.Error(), 5*time.Second)
	}
	if wrote {
		log.FromContext(ctx).Info("authorization model written", "storeId", store.Status.StoreID, "modelId", id,
			"types", len(model.GetTypeDefinitions()), "modules", 1+len(modules)-len(rejected))
	}
	store.Status.AuthorizationModelID = id

	// Tell each AuthorizationModel whether its module is in.
	st.models = nil
	for _, m := range refs {
		before := m.Status.DeepCopy()
		if why, bad := rejected[modelModuleName(m)]; bad {
			setCondition(m, corev1alpha1.ConditionReady, metav1.ConditionFalse, corev1alpha1.ReasonInvalidModel,
				fmt.Sprintf("left out of the model of Store %s: %v", store.Name, why))
		} else {
			st.models = append(st.models, m)
			setCondition(m, corev1alpha1.ConditionReady, metav1.ConditionTrue, corev1alpha1.ReasonReconciled,
				fmt.Sprintf("part of model %s of Store %s", id, store.Name))
		}
		if !equality.Semantic.DeepEqual(before, &m.Status) {
			if err := s.updateModel(ctx, m.Annotations[ClusterAnnotation], m); err != nil && !gone(err) {
				log.FromContext(ctx).Error(err, "writing AuthorizationModel status", "authorizationModel", modelModuleName(m))
			}
		}
	}
	msg := fmt.Sprintf("model %s: core module and %d modules", id, len(modules)-len(rejected))
	if len(rejected) > 0 {
		msg += fmt.Sprintf("; %d left out (see their AuthorizationModels)", len(rejected))
	}
	setCondition(store, corev1alpha1.ConditionModelWritten, metav1.ConditionTrue, corev1alpha1.ReasonReconciled, msg)
	return next
}
