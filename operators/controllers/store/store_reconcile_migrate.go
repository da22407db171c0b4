package store

import (
	"context"
	"fmt"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/log"

	corev1alpha1 "github.com/meshplane/meshplane/apis/core/v1alpha1"
	"github.com/meshplane/meshplane/apis/fga"
)

// migrateStep rewrites, once per OpenFGA store and process, the tuples
// whose ids are in the format before escaped, namespaced ids
// (fga.MigrateID): the account tuples the initializer wrote are in no
// Store's spec, so the tuples step would never rewrite them. Rewriting
// twice changes nothing, so a restart only reads the store again.
type migrateStep struct {
	read  func(ctx context.Context, storeID, object string) ([]corev1alpha1.Tuple, error)
	write func(ctx context.Context, storeID string, add, remove []corev1alpha1.Tuple) error

	mu   sync.Mutex
	done map[string]bool
}

func (s *migrateStep) reconcile(ctx context.Context, st *state) result {
	id := st.store.Status.StoreID
	s.mu.Lock()
	done := s.done[id]
	s.mu.Unlock()
	if done || id == "" {
		return next
	}
	tuples, err := s.read(ctx, id, "")
	if err == nil {
		err = s.migrate(ctx, id, tuples)
	}
	if err != nil {
		setCondition(st.store, corev1alpha1.ConditionTuplesWritten, metav1.ConditionFalse, corev1alpha1.ReasonError,
			"migrating tuple ids: "+err.Error())
		return wait(5 * time.Second)
	}
	s.mu.Lock()
	if s.done == nil {
		s.done = map[string]bool{}
	}
	s.done[id] = true
	s.mu.Unlock()
	return next
}

func (s *migrateStep) migrate(ctx context.Context, storeID string, tuples []corev1alpha1.Tuple) error {
	logger := log.FromContext(ctx).WithValues("storeId", storeID)
	var add, remove []corev1alpha1.Tuple
	for _, t := range tuples {
		if m, changed := fga.MigrateTuple(t); changed {
			logger.V(1).Info("tuple id migrated", "from", t.String(), "to", m.String())
			add, remove = append(add, m), append(remove, t)
		} else if unnamespaced(t.Object) {
			logger.Info("tuple names a namespaced object without its namespace (the format before namespaced ids); it grants nothing, write it again with the namespace",
				"tuple", t.String())
		}
	}
	if len(add) == 0 {
		return nil
	}
	if err := s.write(ctx, storeID, add, remove); err != nil {
		return fmt.Errorf("rewriting %d tuples: %w", len(add), err)
	}
	logger.Info("tuple ids migrated to the escaped, namespaced format", "tuples", len(add))
	return nil
}

func (s *migrateStep) forget(st *state) {
	s.mu.Lock()
	delete(s.done, st.store.Status.StoreID)
	s.mu.Unlock()
}

// namespacedTypes are the built-in namespaced kinds' types.
var namespacedTypes = func() map[string]bool {
	m := map[string]bool{}
	for _, r := range fga.BuiltinResources {
		if r.Namespaced {
			m[r.Type()] = true
		}
	}
	return m
}()

// unnamespaced reports an object of a built-in namespaced kind whose id
// has no namespace: written in the format before namespaced ids.
func unnamespaced(object string) bool {
	typ, segments, err := fga.ParseID(object)
	return err == nil && namespacedTypes[typ] && len(segments) == 2
}

// currentTuple is t with its ids in the current format: a Store's or an
// AuthorizationModel's tuples written in the old format (or Platform
// Mesh's spelling of service accounts) mean what they meant.
func currentTuple(t corev1alpha1.Tuple) corev1alpha1.Tuple {
	m, _ := fga.MigrateTuple(t)
	return m
}
