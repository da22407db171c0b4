package store

import (
	"context"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/log"

	corev1alpha1 "github.com/meshplane/meshplane/apis/core/v1alpha1"
)

// storeStep makes sure the OpenFGA store of status.storeId exists; a
// Store without one (or whose store is gone) gets a new store, named
// "<name>.<uid>" so a Store recreated under the same name never finds
// the old one's store and tuples.
type storeStep struct {
	exists      func(ctx context.Context, id string) (bool, error)
	createStore func(ctx context.Context, name string) (string, error)
	// listStores returns the ids of the stores named name.
	listStores func(ctx context.Context, name string) ([]string, error)

	// verified is when each store id was last found to exist: it is asked
	// again after verifyEvery, not at every resync (an OpenFGA call per
	// organization every 30 s).
	mu       sync.Mutex
	verified map[string]time.Time
}

// verifyEvery is how often a store known to exist is looked up again (a
// store deleted behind the platform's back is made again within it).
const verifyEvery = 5 * time.Minute

func (s *storeStep) recentlyVerified(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	at, ok := s.verified[id]
	return ok && time.Since(at) < verifyEvery
}

func (s *storeStep) markVerified(id string, ok bool) {
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
		s.verified[id] = time.Now()
	} else {
		delete(s.verified, id)
	}
}

// openFGAName is the OpenFGA store name of a Store.
func openFGAName(st *corev1alpha1.Store) string {
	uid := strings.ReplaceAll(string(st.UID), "-", "")
	if len(uid) > 12 {
		uid = uid[:12]
	}
	return st.Name + "." + uid
}

func (s *storeStep) reconcile(ctx context.Context, st *state) result {
	store := st.store
	if id := store.Status.StoreID; id != "" {
		if s.recentlyVerified(id) {
			setCondition(store, corev1alpha1.ConditionStoreCreated, metav1.ConditionTrue, corev1alpha1.ReasonReconciled, "OpenFGA store "+id)
			return next
		}
		ok, err := s.exists(ctx, id)
		if err != nil {
			setCondition(store, corev1alpha1.ConditionStoreCreated, metav1.ConditionFalse, corev1alpha1.ReasonError, err.Error())
			return wait(5 * time.Second)
		}
		s.markVerified(id, ok)
		if ok {
			setCondition(store, corev1alpha1.ConditionStoreCreated, metav1.ConditionTrue, corev1alpha1.ReasonReconciled, "OpenFGA store "+id)
			return next
		}
		log.FromContext(ctx).Info("OpenFGA store is gone, creating a new one", "storeId", id)
	}
	name := openFGAName(store)
	// A store made for this very Store whose id did not reach the status.
	ids, err := s.listStores(ctx, name)
	if err != nil {
		setCondition(store, corev1alpha1.ConditionStoreCreated, metav1.ConditionFalse, corev1alpha1.ReasonError, err.Error())
		return wait(5 * time.Second)
	}
	var id string
	if len(ids) > 0 {
		id = ids[0]
	} else if id, err = s.createStore(ctx, name); err != nil {
		setCondition(store, corev1alpha1.ConditionStoreCreated, metav1.ConditionFalse, corev1alpha1.ReasonError, err.Error())
		return wait(5 * time.Second)
	}
	log.FromContext(ctx).Info("OpenFGA store ready", "storeId", id, "name", name)
	s.markVerified(id, true)
	store.Status.StoreID = id
	// A new store has neither model nor tuples.
	store.Status.AuthorizationModelID = ""
	store.Status.ManagedTuples = nil
	setCondition(store, corev1alpha1.ConditionStoreCreated, metav1.ConditionTrue, corev1alpha1.ReasonReconciled, "OpenFGA store "+id)
	return next
}
