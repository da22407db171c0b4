package store

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime/pkg/client"
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
	read     func(ctx context.Context, storeID, object string) ([]corev1alpha1.Tuple, error)
	write    func(ctx context.Context, storeID string, add, remove []corev1alpha1.Tuple) error
	migrator *migrator

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
		m, changed, err := s.migrator.tuple(ctx, t)
		if err != nil {
			return err
		}
		if changed {
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

// migrator gives tuples their ids in the current format
// (fga.MigrateTuple), and the owner tuple the initializer wrote for an
// Account's creator whose name has a ":" the old format wrote as "." (other
// than a service account's, which fga.MigrateID reads back) the creator's
// current id: the creator is read from the Account, so
// "oidc:alice" is not taken for a user named "oidc.alice".
type migrator struct {
	// creator is spec.creator of Account name in cluster ("" when the
	// Account has none or is gone); nil: no lookups.
	creator func(ctx context.Context, cluster, name string) (string, error)

	mu       sync.Mutex
	creators map[string]string
}

// tuple is t in the current format and whether it changed.
func (m *migrator) tuple(ctx context.Context, t corev1alpha1.Tuple) (corev1alpha1.Tuple, bool, error) {
	cur, changed := fga.MigrateTuple(t)
	if m == nil || m.creator == nil || t.Relation != fga.RelationAssignee || cur.User != t.User ||
		!strings.HasPrefix(t.User, fga.UserType+":") || !strings.Contains(t.User, ".") {
		return cur, changed, nil
	}
	typ, segs, err := fga.ParseID(t.Object)
	if err != nil || typ != fga.RoleType || len(segs) != 4 || segs[0] != fga.AccountType || segs[3] != fga.RelationOwner {
		return cur, changed, nil
	}
	key := segs[1] + "/" + segs[2]
	m.mu.Lock()
	creator, known := m.creators[key]
	m.mu.Unlock()
	if !known {
		if creator, err = m.creator(ctx, segs[1], segs[2]); err != nil && !apierrors.IsNotFound(err) {
			return cur, changed, fmt.Errorf("reading the creator of Account %s in %s: %w", segs[2], segs[1], err)
		}
		m.mu.Lock()
		if m.creators == nil {
			m.creators = map[string]string{}
		}
		m.creators[key] = creator
		m.mu.Unlock()
	}
	if strings.Contains(creator, ":") && t.User == fga.UserType+":"+strings.ReplaceAll(creator, ":", ".") {
		cur.User = fga.UserID(creator)
		return cur, true, nil
	}
	return cur, changed, nil
}

// accountCreator reads an Account's spec.creator through the export's
// virtual workspace.
func accountCreator(clientOf func(ctx context.Context, cluster string) (ctrl.Client, error)) func(ctx context.Context, cluster, name string) (string, error) {
	return func(ctx context.Context, cluster, name string) (string, error) {
		cl, err := clientOf(ctx, cluster)
		if err != nil {
			return "", err
		}
		ctx, cancel := context.WithTimeout(ctx, callTimeout)
		defer cancel()
		acc := &corev1alpha1.Account{}
		if err := cl.Get(ctx, ctrl.ObjectKey{Name: name}, acc); err != nil {
			return "", err
		}
		if acc.Spec.Creator == nil {
			return "", nil
		}
		return *acc.Spec.Creator, nil
	}
}

// current is t in the current format; a creator that cannot be read now
// leaves the tuple as fga.MigrateTuple has it (the next reconcile tries
// again).
func (m *migrator) current(ctx context.Context, t corev1alpha1.Tuple) corev1alpha1.Tuple {
	cur, _, err := m.tuple(ctx, t)
	if err != nil {
		log.FromContext(ctx).Info("tuple left in its old format for now", "tuple", t.String(), "reason", err.Error())
	}
	return cur
}
