package store

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	corev1alpha1 "github.com/meshplane/meshplane/apis/core/v1alpha1"
)

// Finalizer holds a Store until its OpenFGA store is deleted (Platform
// Mesh's name).
const Finalizer = "core.platform-mesh.io/fga-store"

// resync is how often a Store is looked at without an event, so an
// AuthorizationModel whose reference could not be mapped to the Store
// (its cluster not yet known) is picked up, and drift in OpenFGA repaired.
const resync = 30 * time.Second

// state is what the steps learn about one Store as they run.
type state struct {
	// cluster is the Store's logical cluster, path its workspace path.
	cluster, path string
	store         *corev1alpha1.Store
	// models are the AuthorizationModels referencing the Store whose
	// modules made it into the model (set by the model step).
	models []*corev1alpha1.AuthorizationModel
}

// result says whether the chain goes on.
type result struct {
	done         bool
	requeueAfter time.Duration
}

var next = result{done: true}

func wait(after time.Duration) result { return result{requeueAfter: after} }

// step is one reconcile step; it sets its own condition on s.store.
type step interface {
	reconcile(ctx context.Context, s *state) result
}

type reconciler struct {
	// models lists the AuthorizationModels (for the model step).
	models   *modelList
	steps    []step
	deletion step

	getStore     func(ctx context.Context, cluster, name string) (*corev1alpha1.Store, error)
	updateStore  func(ctx context.Context, cluster string, s *corev1alpha1.Store) error
	updateStatus func(ctx context.Context, cluster string, s *corev1alpha1.Store) error
	// pathOf returns a cluster's workspace path, clusterOf the other way.
	pathOf    func(cluster string) (string, bool)
	clusterOf func(path string) (string, bool)
	// orgsCluster returns the logical cluster of root:orgs, where the
	// platform keeps organizations' Stores.
	orgsCluster func(ctx context.Context) (string, error)
}

func (r *reconciler) reconcile(ctx context.Context, cluster, name string) (time.Duration, error) {
	if c, ok := r.clusterOf(cluster); ok {
		cluster = c
	}
	logger := log.FromContext(ctx).WithValues("cluster", cluster, "store", name)
	ctx = log.IntoContext(ctx, logger)
	st, err := r.getStore(ctx, cluster, name)
	if err != nil {
		if gone(err) {
			return 0, nil
		}
		return 0, fmt.Errorf("getting store: %w", err)
	}
	path, _ := r.pathOf(cluster)
	s := &state{cluster: cluster, path: path, store: st}
	before := st.Status.DeepCopy()

	orgs, err := r.orgsCluster(ctx)
	if err != nil {
		return 0, fmt.Errorf("finding the workspace of organizations' Stores: %w", err)
	}
	if cluster != orgs && st.DeletionTimestamp.IsZero() {
		// Only the platform's Stores, one per organization in root:orgs,
		// become OpenFGA stores: a Store a tenant makes in a workspace of
		// their own would only be a store the webhook never asks, or a way
		// to write into one.
		setCondition(st, corev1alpha1.ConditionReady, metav1.ConditionFalse, corev1alpha1.ReasonNotOrganizationStore,
			"only the Stores the platform keeps for organizations (in the organizations' workspace, root:orgs) become OpenFGA stores; this one is left alone")
		return 0, r.writeStatus(ctx, cluster, st, before)
	}

	if !st.DeletionTimestamp.IsZero() {
		if !controllerutil.ContainsFinalizer(st, Finalizer) {
			return 0, nil
		}
		if res := r.deletion.reconcile(ctx, s); !res.done {
			return res.requeueAfter, r.writeStatus(ctx, cluster, st, before)
		}
		for _, stp := range r.steps {
			if f, ok := stp.(interface{ forget(*state) }); ok {
				f.forget(s)
			}
		}
		controllerutil.RemoveFinalizer(st, Finalizer)
		if err := r.updateStore(ctx, cluster, st); err != nil && !gone(err) {
			return 0, fmt.Errorf("releasing finalizer: %w", err)
		}
		logger.Info("store deleted from OpenFGA", "storeId", st.Status.StoreID)
		return 0, nil
	}
	if !controllerutil.ContainsFinalizer(st, Finalizer) {
		controllerutil.AddFinalizer(st, Finalizer)
		if err := r.updateStore(ctx, cluster, st); err != nil {
			if gone(err) {
				return 0, nil
			}
			return 0, fmt.Errorf("adding finalizer: %w", err)
		}
	}

	requeue, allDone := resync, true
	for _, stp := range r.steps {
		if res := stp.reconcile(ctx, s); !res.done {
			allDone, requeue = false, res.requeueAfter
			break
		}
	}
	if allDone {
		setCondition(st, corev1alpha1.ConditionReady, metav1.ConditionTrue, corev1alpha1.ReasonReconciled, "the store, its model and its tuples are written")
	} else {
		reason, msg := firstNotDone(st)
		setCondition(st, corev1alpha1.ConditionReady, metav1.ConditionFalse, reason, msg)
		logger.Info("not ready", "reason", reason, "message", msg)
	}
	return requeue, r.writeStatus(ctx, cluster, st, before)
}

func (r *reconciler) writeStatus(ctx context.Context, cluster string, st *corev1alpha1.Store, before *corev1alpha1.StoreStatus) error {
	if equality.Semantic.DeepEqual(before, &st.Status) {
		return nil
	}
	if err := r.updateStatus(ctx, cluster, st); err != nil && !gone(err) {
		return fmt.Errorf("writing status: %w", err)
	}
	return nil
}

var stepConditions = []string{corev1alpha1.ConditionStoreCreated, corev1alpha1.ConditionModelWritten, corev1alpha1.ConditionTuplesWritten}

func firstNotDone(st *corev1alpha1.Store) (string, string) {
	for _, t := range stepConditions {
		if c := meta.FindStatusCondition(st.Status.Conditions, t); c != nil && c.Status != metav1.ConditionTrue {
			return c.Reason, t + ": " + c.Message
		}
	}
	return corev1alpha1.ReasonPending, "reconciling"
}

// conditioned is a Store or an AuthorizationModel.
type conditioned interface {
	GetConditions() []metav1.Condition
	SetConditions([]metav1.Condition)
	GetGeneration() int64
}

// setCondition sets one condition; the transition time changes only with
// the status.
func setCondition(obj conditioned, t string, status metav1.ConditionStatus, reason, msg string) {
	conds := obj.GetConditions()
	meta.SetStatusCondition(&conds, metav1.Condition{
		Type: t, Status: status, Reason: reason, Message: msg, ObservedGeneration: obj.GetGeneration(),
	})
	obj.SetConditions(conds)
}

// gone reports an object (or its whole cluster) that no longer exists.
func gone(err error) bool {
	return apierrors.IsNotFound(err) || errors.Is(err, errClusterGone)
}

var errClusterGone = errors.New("cluster is no longer served")

func sortTuples(ts []corev1alpha1.Tuple) []corev1alpha1.Tuple {
	sort.Slice(ts, func(i, j int) bool { return ts[i].String() < ts[j].String() })
	return ts
}
