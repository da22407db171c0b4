package store

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/log"

	corev1alpha1 "github.com/meshplane/meshplane/apis/core/v1alpha1"
)

// storeStep makes sure the OpenFGA store of status.storeId exists and was
// made for this Store; a Store without one (or whose store is gone, or
// whose status names a store made for another Store) gets its own,
// named after its name and UID (openFGAName) so a Store recreated under
// the same name never finds the old one's store and tuples.
type storeStep struct {
	// storeName returns the name of the OpenFGA store id and whether it
	// exists.
	storeName   func(ctx context.Context, id string) (string, bool, error)
	createStore func(ctx context.Context, name string) (string, error)
	// listStores returns the ids of the stores named name.
	listStores func(ctx context.Context, name string) ([]string, error)
	// shared, when set, is the store every organization's Store names
	// (--organization-stores=shared).
	shared *sharedStore

	// verified is when each store id was last found to exist and to be
	// the Store's (keyed by id and the Store's UID): it is asked again
	// after verifyEvery, not at every resync (an OpenFGA call per
	// organization every 30 s).
	mu       sync.Mutex
	verified map[string]time.Time
}

// verifyEvery is how often a store known to exist is looked up again (a
// store deleted behind the platform's back is made again within it).
const verifyEvery = 5 * time.Minute

func verifiedKey(id string, st *corev1alpha1.Store) string { return id + "/" + string(st.UID) }

func (s *storeStep) recentlyVerified(key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	at, ok := s.verified[key]
	return ok && time.Since(at) < verifyEvery
}

func (s *storeStep) markVerified(key string, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.verified == nil {
		s.verified = map[string]time.Time{}
	}
	for k, at := range s.verified {
		if time.Since(at) >= verifyEvery {
			delete(s.verified, k)
		}
	}
	if ok {
		s.verified[key] = time.Now()
	} else {
		delete(s.verified, key)
	}
}

// maxStoreName is OpenFGA's limit on a store's name.
const maxStoreName = 64

// openFGAName is the OpenFGA store name of a Store: its name (cut to fit)
// and its whole UID, which the core makes and nobody chooses.
func openFGAName(st *corev1alpha1.Store) string {
	uid := strings.ReplaceAll(string(st.UID), "-", "")
	name := st.Name
	if n := maxStoreName - 1 - len(uid); len(name) > n {
		name = name[:max(n, 0)]
	}
	return name + "." + uid
}

// legacyOpenFGAName is the name earlier versions gave a Store's store
// (its name and the first 12 hex digits of its UID); such stores stay the
// Store's.
func legacyOpenFGAName(st *corev1alpha1.Store) string {
	uid := strings.ReplaceAll(string(st.UID), "-", "")
	if len(uid) > 12 {
		uid = uid[:12]
	}
	return st.Name + "." + uid
}

// ownsName reports whether an OpenFGA store of that name was made for
// the Store.
func ownsName(st *corev1alpha1.Store, name string) bool {
	return st.UID != "" && (name == openFGAName(st) || name == legacyOpenFGAName(st))
}

// ownedStores returns the ids of the OpenFGA stores made for the Store:
// status.storeId when its name says so, and any found by the Store's
// names (made by an attempt whose id never reached the status).
func ownedStores(ctx context.Context, st *corev1alpha1.Store,
	storeName func(ctx context.Context, id string) (string, bool, error),
	listStores func(ctx context.Context, name string) ([]string, error)) ([]string, error) {
	var ids []string
	seen := map[string]bool{}
	if id := st.Status.StoreID; id != "" {
		name, ok, err := storeName(ctx, id)
		if err != nil {
			return nil, err
		}
		if ok && ownsName(st, name) {
			ids, seen[id] = append(ids, id), true
		}
	}
	for _, name := range []string{openFGAName(st), legacyOpenFGAName(st)} {
		more, err := listStores(ctx, name)
		if err != nil {
			return nil, err
		}
		for _, id := range more {
			if !seen[id] {
				ids, seen[id] = append(ids, id), true
			}
		}
	}
	return ids, nil
}

func (s *storeStep) reconcile(ctx context.Context, st *state) result {
	store := st.store
	fail := func(err error) result {
		setCondition(store, corev1alpha1.ConditionStoreCreated, metav1.ConditionFalse, corev1alpha1.ReasonError, err.Error())
		return wait(5 * time.Second)
	}
	if s.shared != nil {
		id, err := s.shared.storeID(ctx)
		if err != nil {
			return fail(err)
		}
		if store.Status.StoreID != id {
			// Whatever the status named before (or was made to name), the
			// organization's tuples go into the shared store from now on.
			log.FromContext(ctx).Info("Store points at the shared OpenFGA store", "storeId", id, "was", store.Status.StoreID)
			store.Status.StoreID = id
			store.Status.AuthorizationModelID = ""
			store.Status.ManagedTuples = nil
		}
		setCondition(store, corev1alpha1.ConditionStoreCreated, metav1.ConditionTrue, corev1alpha1.ReasonReconciled, "shared OpenFGA store "+id)
		return next
	}
	if id := store.Status.StoreID; id != "" {
		key := verifiedKey(id, store)
		if s.recentlyVerified(key) {
			setCondition(store, corev1alpha1.ConditionStoreCreated, metav1.ConditionTrue, corev1alpha1.ReasonReconciled, "OpenFGA store "+id)
			return next
		}
		name, ok, err := s.storeName(ctx, id)
		if err != nil {
			return fail(err)
		}
		owned := ok && ownsName(store, name)
		s.markVerified(key, owned)
		switch {
		case owned:
			setCondition(store, corev1alpha1.ConditionStoreCreated, metav1.ConditionTrue, corev1alpha1.ReasonReconciled, "OpenFGA store "+id)
			return next
		case ok:
			// status.storeId is writable by whoever may write the status:
			// never write into, or delete, a store made for another Store.
			log.FromContext(ctx).Info("status.storeId names an OpenFGA store not made for this Store; ignoring it",
				"storeId", id, "storeName", name, "want", openFGAName(store))
		default:
			log.FromContext(ctx).Info("OpenFGA store is gone, creating a new one", "storeId", id)
		}
	}
	// A store made for this very Store whose id did not reach the status
	// (or was overwritten).
	var ids []string
	for _, name := range []string{openFGAName(store), legacyOpenFGAName(store)} {
		more, err := s.listStores(ctx, name)
		if err != nil {
			return fail(err)
		}
		ids = append(ids, more...)
	}
	name := openFGAName(store)
	var id string
	if len(ids) > 0 {
		id = ids[0]
	} else {
		var err error
		if id, err = s.createStore(ctx, name); err != nil {
			return fail(err)
		}
	}
	log.FromContext(ctx).Info("OpenFGA store ready", "storeId", id, "name", name)
	s.markVerified(verifiedKey(id, store), true)
	store.Status.StoreID = id
	// A new store has neither model nor tuples.
	store.Status.AuthorizationModelID = ""
	store.Status.ManagedTuples = nil
	setCondition(store, corev1alpha1.ConditionStoreCreated, metav1.ConditionTrue, corev1alpha1.ReasonReconciled,
		fmt.Sprintf("OpenFGA store %s", id))
	return next
}
