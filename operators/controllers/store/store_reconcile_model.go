package store

import (
	"context"
	"crypto/sha256"
	"fmt"
	"sort"
	"sync"
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
	// listModels lists the AuthorizationModels keep accepts (each with its
	// cluster in ClusterAnnotation), copies the step may change.
	listModels func(ctx context.Context, keep func(*corev1alpha1.AuthorizationModel) bool) ([]corev1alpha1.AuthorizationModel, error)
	// boundResources lists the resources bound in the Store's
	// organization; nil means none.
	boundResources func(ctx context.Context, st *state) ([]fga.Resource, error)
	writeModel     func(ctx context.Context, storeID, currentID string, m *openfgav1.AuthorizationModel) (string, bool, error)
	updateModel    func(ctx context.Context, cluster string, m *corev1alpha1.AuthorizationModel) error
	// shared is set when Stores name the shared store
	// (--organization-stores=shared): writeModel grows its union model,
	// and tenants' AuthorizationModels are left out of it (their types,
	// relations and conditions would reach every organization's model).
	shared bool

	// last is what each Store's model was last composed from and written
	// as (by Store UID): the same modules again, and the store still on
	// that model, need neither parsing nor OpenFGA (a Store is looked at
	// every 30 s; parsing the core module is most of that).
	mu   sync.Mutex
	last map[string]composed

	// models are composed once for all Stores with the same inputs.
	models compositions
}

// composed is a Store's model as last composed and written.
type composed struct {
	inputs           [sha256.Size]byte
	storeID, modelID string
	rejected         map[string]error
}

// modelInputs hashes what a model is composed from.
func modelInputs(core string, modules []fga.Module) [sha256.Size]byte {
	h := sha256.New()
	for _, m := range append([]fga.Module{{Name: fga.CoreModuleName, Contents: core}}, modules...) {
		for _, part := range []string{m.Name, m.Contents} {
			_, _ = fmt.Fprintf(h, "%d:%s", len(part), part)
		}
	}
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	return sum
}

func storeKey(st *state) string {
	if st.store.UID != "" {
		return string(st.store.UID)
	}
	return st.cluster + "/" + st.store.Name
}

// unchanged returns the model id and left-out modules of the last
// composition when the inputs and the store's model are the same.
func (s *modelStep) unchanged(key string, inputs [sha256.Size]byte, store *corev1alpha1.Store) (string, map[string]error, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.last[key]
	if !ok || c.inputs != inputs || c.storeID != store.Status.StoreID || c.modelID == "" || c.modelID != store.Status.AuthorizationModelID {
		return "", nil, false
	}
	return c.modelID, c.rejected, true
}

func (s *modelStep) remember(key string, c composed) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.last == nil {
		s.last = map[string]composed{}
	}
	s.last[key] = c
}

// forget drops a deleted Store's composition.
func (s *modelStep) forget(st *state) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.last, storeKey(st))
}

// sameOrganization reports whether m lives where a model of the Store may
// live: in the Store's own cluster (root:orgs, where only the platform
// writes) or in the workspace of the organization the Store was made for
// (its OrgClusterAnnotationKey, set by the operator). What m's storeRef
// says is never enough: an AuthorizationModel reaches only its own
// organization's Store.
func sameOrganization(m *corev1alpha1.AuthorizationModel, st *state) bool {
	c := m.Annotations[ClusterAnnotation]
	if c == "" {
		return false
	}
	org := st.store.Annotations[corev1alpha1.OrgClusterAnnotationKey]
	return c == st.cluster || (org != "" && c == org)
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
	mine, err := s.listModels(ctx, func(m *corev1alpha1.AuthorizationModel) bool {
		return references(m, st) && m.DeletionTimestamp.IsZero()
	})
	if err != nil {
		return fail(corev1alpha1.ReasonError, fmt.Sprintf("listing AuthorizationModels: %v", err), 5*time.Second)
	}
	refs := make([]*corev1alpha1.AuthorizationModel, 0, len(mine))
	for i := range mine {
		m := &mine[i]
		if sameOrganization(m, st) {
			refs = append(refs, m)
			continue
		}
		// A model of another organization naming this Store: left out,
		// and told so.
		before := m.Status.DeepCopy()
		setCondition(m, corev1alpha1.ConditionReady, metav1.ConditionFalse, corev1alpha1.ReasonOtherOrganization,
			fmt.Sprintf("left out of Store %s: an AuthorizationModel adds only to the Store of its own organization, from the organization's workspace (or from root:orgs)", store.Name))
		if !equality.Semantic.DeepEqual(before, &m.Status) {
			log.FromContext(ctx).Info("AuthorizationModel of another organization left out", "authorizationModel", modelModuleName(m))
			if err := s.updateModel(ctx, m.Annotations[ClusterAnnotation], m); err != nil && !gone(err) {
				log.FromContext(ctx).Error(err, "writing AuthorizationModel status", "authorizationModel", modelModuleName(m))
			}
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
	if s.shared {
		for _, m := range refs {
			before := m.Status.DeepCopy()
			setCondition(m, corev1alpha1.ConditionReady, metav1.ConditionFalse, corev1alpha1.ReasonInvalidModel,
				fmt.Sprintf("left out of Store %s: organizations share one OpenFGA store (--organization-stores=shared), whose model takes no tenant-written modules; moving an organization with AuthorizationModels to a store of its own is not built yet", store.Name))
			if !equality.Semantic.DeepEqual(before, &m.Status) {
				if err := s.updateModel(ctx, m.Annotations[ClusterAnnotation], m); err != nil && !gone(err) {
					log.FromContext(ctx).Error(err, "writing AuthorizationModel status", "authorizationModel", modelModuleName(m))
				}
			}
		}
		refs = nil
	}
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
	// A core module the platform wrote before is read as today's, so
	// existing organizations get model changes without editing their Store.
	core, _ := fga.CurrentCoreModule(store.Spec.CoreModule)
	key, inputs := storeKey(st), modelInputs(core, modules)
	id, rejected, same := s.unchanged(key, inputs, store)
	if !same {
		model, left, err := s.models.compose(inputs, core, modules)
		if err != nil {
			return fail(corev1alpha1.ReasonInvalidModel, err.Error(), resync)
		}
		rejected = left
		for name, why := range rejected {
			log.FromContext(ctx).Info("module left out of the model", "module", name, "reason", why.Error())
		}
		written, wrote, err := s.writeModel(ctx, store.Status.StoreID, store.Status.AuthorizationModelID, model)
		if err != nil {
			return fail(corev1alpha1.ReasonError, err.Error(), 5*time.Second)
		}
		id = written
		if wrote {
			log.FromContext(ctx).Info("authorization model written", "storeId", store.Status.StoreID, "modelId", id,
				"types", len(model.GetTypeDefinitions()), "modules", 1+len(modules)-len(rejected))
		}
		s.remember(key, composed{inputs: inputs, storeID: store.Status.StoreID, modelID: id, rejected: rejected})
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

// compositions shares composed models between Stores: the Stores of most
// organizations have the same core module and the same modules (none, or
// the same bound resources), and parsing them (ANTLR) was most of what a
// new organization cost the operator. Models and their left-out modules
// are shared read-only (hashed, compared, sent). The most recent
// maxCompositions inputs are kept.
type compositions struct {
	mu      sync.Mutex
	entries map[[sha256.Size]byte]*composition
	order   [][sha256.Size]byte // oldest first
}

const maxCompositions = 16

// composition is one composed model; done is closed once it is set.
type composition struct {
	done     chan struct{}
	model    *openfgav1.AuthorizationModel
	rejected map[string]error
	err      error
}

// compose returns the model of core and modules, whose hash is inputs
// (modelInputs), composing it unless it was composed before; Stores
// reconciled at once wait for the one composing it.
func (c *compositions) compose(inputs [sha256.Size]byte, core string, modules []fga.Module) (*openfgav1.AuthorizationModel, map[string]error, error) {
	c.mu.Lock()
	if e, ok := c.entries[inputs]; ok {
		c.mu.Unlock()
		<-e.done
		return e.model, e.rejected, e.err
	}
	if c.entries == nil {
		c.entries = map[[sha256.Size]byte]*composition{}
	}
	e := &composition{done: make(chan struct{})}
	c.entries[inputs] = e
	c.order = append(c.order, inputs)
	if len(c.order) > maxCompositions {
		delete(c.entries, c.order[0])
		c.order = c.order[1:]
	}
	c.mu.Unlock()

	e.model, e.rejected, e.err = fga.ComposeSkipping(fga.Module{Name: fga.CoreModuleName, Contents: core}, modules)
	close(e.done)
	return e.model, e.rejected, e.err
}
