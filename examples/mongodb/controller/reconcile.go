package controller

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	mcreconcile "sigs.k8s.io/multicluster-runtime/pkg/reconcile"

	mongodbv1alpha1 "github.com/meshplane/meshplane/examples/mongodb/api/v1alpha1"
)

// conflictRetry is when a MongoDB whose status write conflicted is looked at again.
const conflictRetry = 100 * time.Millisecond

// reconciler runs the steps for one MongoDB.
type reconciler struct {
	cluster func(ctx context.Context, name string) (cluster.Cluster, error)
	// downstream writes, downstreamReader reads (uncached) the downstream cluster.
	downstream       client.Client
	downstreamReader client.Reader
	namespace        string
}

// state is what the steps share about one MongoDB.
type state struct {
	consumer consumer
	db       *mongodbv1alpha1.MongoDB
	// secrets reads and writes Secrets in the consumer workspace, direct
	// (not cached): only possible where the binding accepted the claim.
	secrets kubernetes.Interface
	// password of Username, kept downstream.
	password string
	// ready: the downstream replica set runs with every member.
	ready bool
}

// Reconcile implements mcreconcile.Reconciler.
func (r *reconciler) Reconcile(ctx context.Context, req mcreconcile.Request) (reconcile.Result, error) {
	c := consumer{cluster: string(req.ClusterName), namespace: req.Namespace, name: req.Name}
	logger := log.FromContext(ctx).WithValues("cluster", c.cluster, "namespace", c.namespace, "mongodb", c.name)
	ctx = log.IntoContext(ctx, logger)

	cl, err := r.cluster(ctx, c.cluster)
	if err != nil {
		// Not engaged (a downstream event of a workspace that unbound).
		logger.V(1).Info("workspace not engaged", "err", err)
		return reconcile.Result{}, nil
	}
	db := &mongodbv1alpha1.MongoDB{}
	if err := cl.GetClient().Get(ctx, req.NamespacedName, db); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	secrets, err := kubernetes.NewForConfigAndClient(cl.GetConfig(), cl.GetHTTPClient())
	if err != nil {
		return reconcile.Result{}, err
	}
	s := &state{consumer: c, db: db, secrets: secrets}

	if !db.DeletionTimestamp.IsZero() {
		return reconcile.Result{}, r.delete(ctx, cl.GetClient(), s)
	}
	if controllerutil.AddFinalizer(db, Finalizer) {
		if err := cl.GetClient().Update(ctx, db); err != nil {
			return reconcile.Result{}, fmt.Errorf("adding finalizer: %w", err)
		}
	}
	before := db.Status.DeepCopy()
	var errs []error
	if err := r.syncDownstream(ctx, s); err != nil {
		errs = append(errs, err)
	} else {
		r.statusFromDownstream(ctx, s)
		if err := r.connectionSecret(ctx, s); err != nil {
			errs = append(errs, err)
		}
	}
	setReady(s)
	if !equality.Semantic.DeepEqual(before, &db.Status) {
		if err := cl.GetClient().Status().Update(ctx, db); apierrors.IsConflict(err) {
			// Changed meanwhile: its event brings it back; look again soon anyway.
			return reconcile.Result{RequeueAfter: conflictRetry}, nil
		} else if err != nil {
			errs = append(errs, fmt.Errorf("updating status: %w", err))
		}
	}
	return reconcile.Result{}, errors.Join(errs...)
}

// setReady sets Ready from the other conditions.
func setReady(s *state) {
	secret := meta.IsStatusConditionTrue(s.db.Status.Conditions, mongodbv1alpha1.ConditionConnectionSecret)
	cond := metav1.Condition{Type: mongodbv1alpha1.ConditionReady, Status: metav1.ConditionFalse, ObservedGeneration: s.db.Generation}
	switch {
	case s.ready && secret:
		cond.Status, cond.Reason, cond.Message = metav1.ConditionTrue, "Ready", "the replica set runs and the connection Secret is written"
	case s.ready:
		cond.Reason, cond.Message = "NoConnectionSecret", "the replica set runs, but the connection Secret could not be written"
	default:
		cond.Reason, cond.Message = "Provisioning", "the replica set is not running yet"
	}
	meta.SetStatusCondition(&s.db.Status.Conditions, cond)
}
