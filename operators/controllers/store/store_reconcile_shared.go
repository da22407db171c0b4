package store

import (
	"context"
	"fmt"
	"strings"
	"sync"

	openfgav1 "github.com/openfga/api/proto/openfga/v1"

	corev1alpha1 "github.com/meshplane/meshplane/apis/core/v1alpha1"
	"github.com/meshplane/meshplane/apis/fga"
)

// SharedStoreName is the OpenFGA name of the store organizations share
// (--organization-stores=shared; docs/authorization.md, Scale). A Store's
// own store is named <name>.<uid> (openFGAName); a Store's name cannot
// hold '/', so no Store's store is ever taken for the shared one. OpenFGA
// allows [a-zA-Z0-9\s.\-/^_&@]{3,64} in a store name.
const SharedStoreName = "meshplane/organizations"

// sharedStore is the one OpenFGA store the organizations share and its
// model, the union (fga.Union) of every organization's model written so
// far: it only grows, so no organization's Checks lose a type another
// organization's model brought.
type sharedStore struct {
	listStores  func(ctx context.Context, name string) ([]string, error)
	createStore func(ctx context.Context, name string) (string, error)
	latestModel func(ctx context.Context, storeID string) (*openfgav1.AuthorizationModel, error)
	writeModel  func(ctx context.Context, storeID, currentID string, m *openfgav1.AuthorizationModel) (string, bool, error)
	// readAll reads every tuple of the store (for an organization's
	// deletion).
	readAll func(ctx context.Context, storeID string) ([]corev1alpha1.Tuple, error)
	write   func(ctx context.Context, storeID string, add, remove []corev1alpha1.Tuple) error

	// mu serializes the store's creation and its model's growth.
	mu      sync.Mutex
	id      string
	model   *openfgav1.AuthorizationModel
	modelID string
}

// storeID returns the shared store's id, finding or making it once.
func (s *sharedStore) storeID(ctx context.Context) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.storeIDLocked(ctx)
}

func (s *sharedStore) storeIDLocked(ctx context.Context) (string, error) {
	if s.id != "" {
		return s.id, nil
	}
	ids, err := s.listStores(ctx, SharedStoreName)
	if err != nil {
		return "", err
	}
	id := ""
	if len(ids) > 0 {
		id = ids[0]
	} else if id, err = s.createStore(ctx, SharedStoreName); err != nil {
		return "", fmt.Errorf("creating the shared store: %w", err)
	}
	s.id = id
	return id, nil
}

// grow makes the shared model hold m (the union of the two, written when
// it has anything new) and returns the id of a model that holds m. A
// model that would change a definition the shared model has is refused
// (fga.ErrConflict).
func (s *sharedStore) grow(ctx context.Context, m *openfgav1.AuthorizationModel) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id, err := s.storeIDLocked(ctx)
	if err != nil {
		return "", err
	}
	if s.model == nil {
		// After a restart: grow from what the store holds, so no type
		// written for an organization before is dropped.
		latest, err := s.latestModel(ctx, id)
		if err != nil {
			return "", fmt.Errorf("reading the shared model: %w", err)
		}
		if latest != nil {
			s.model, s.modelID = latest, latest.GetId()
		}
	}
	if s.model == nil {
		written, _, err := s.writeModel(ctx, id, "", m)
		if err != nil {
			return "", err
		}
		s.model, s.modelID = m, written
		return written, nil
	}
	union, added, err := fga.Union(s.model, m)
	if err != nil {
		return "", err
	}
	if !added {
		return s.modelID, nil
	}
	written, _, err := s.writeModel(ctx, id, s.modelID, union)
	if err != nil {
		return "", err
	}
	s.model, s.modelID = union, written
	return written, nil
}

// scopeOf is what the tuples written for the Store's organization may
// name in the shared store: its Account and owner role in root:orgs and
// objects in its own workspace (the Store's OrgClusterAnnotationKey).
// Tuples of its accounts' workspaces are written by the account and
// RoleAssignment writers, not through the Store.
func scopeOf(st *state) fga.Scope {
	org := st.store.Annotations[corev1alpha1.OrgClusterAnnotationKey]
	return fga.Scope{OrgsCluster: st.cluster, Org: st.store.Name, InOrg: func(c string) bool { return org != "" && c == org }}
}

// namesOrg reports whether t names the organization's Account or owner
// role in root:orgs, or an object in its workspace, as object or as a
// userset's (or parent's) object: the tuples an organization's deletion
// removes from the shared store, as its name can be taken again.
func namesOrg(sc fga.Scope, t corev1alpha1.Tuple) bool {
	if sc.Allows(corev1alpha1.Tuple{Object: t.Object, Relation: t.Relation, User: fga.UserType + ":x"}) == nil {
		return true
	}
	object, _, _ := cutUserset(t.User)
	if object == "" {
		return false
	}
	return sc.Allows(corev1alpha1.Tuple{Object: object, Relation: "r", User: fga.UserType + ":x"}) == nil
}

// cutUserset returns a subject's object ("" for users and group members,
// which name no organization).
func cutUserset(user string) (string, string, bool) {
	object, relation, userset := strings.Cut(user, "#")
	typ, _, _ := strings.Cut(object, ":")
	if typ == fga.UserType || typ == fga.GroupType {
		return "", "", false
	}
	return object, relation, userset
}

// forgetOrg deletes from the shared store every tuple naming the Store's
// organization (its managed tuples, and whatever else names its Account,
// owner role or workspace).
func (s *sharedStore) forgetOrg(ctx context.Context, st *state) (int, error) {
	id, err := s.storeID(ctx)
	if err != nil {
		return 0, err
	}
	sc := scopeOf(st)
	remove := map[corev1alpha1.Tuple]bool{}
	for _, t := range st.store.Status.ManagedTuples {
		if namesOrg(sc, t) {
			remove[t] = true
		}
	}
	all, err := s.readAll(ctx, id)
	if err != nil {
		return 0, err
	}
	for _, t := range all {
		if namesOrg(sc, t) {
			remove[t] = true
		}
	}
	if len(remove) == 0 {
		return 0, nil
	}
	ts := make([]corev1alpha1.Tuple, 0, len(remove))
	for t := range remove {
		ts = append(ts, t)
	}
	return len(ts), s.write(ctx, id, nil, sortTuples(ts))
}
