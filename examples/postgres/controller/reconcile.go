package controller

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
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

	postgresv1alpha1 "github.com/meshplane/meshplane/examples/postgres/api/v1alpha1"
)

// conflictRetry is when a Database whose status write conflicted is looked at again.
const conflictRetry = 100 * time.Millisecond

// reconciler runs the steps for one Database.
type reconciler struct {
	cluster func(ctx context.Context, name string) (cluster.Cluster, error)
	pool    *pgxpool.Pool
	host    string
	port    int
}

// state is what the steps share about one Database.
type state struct {
	db       *postgresv1alpha1.Database
	database string
	role     string
	// secrets reads and writes Secrets in the consumer workspace, direct:
	// only possible where the binding accepted the claim.
	secrets kubernetes.Interface
	// password of role: from the consumer's Secret, or new (newPassword).
	password    string
	newPassword bool
}

// Reconcile implements mcreconcile.Reconciler.
func (r *reconciler) Reconcile(ctx context.Context, req mcreconcile.Request) (reconcile.Result, error) {
	logger := log.FromContext(ctx).WithValues("cluster", req.ClusterName, "namespace", req.Namespace, "database", req.Name)
	ctx = log.IntoContext(ctx, logger)
	cl, err := r.cluster(ctx, string(req.ClusterName))
	if err != nil {
		logger.V(1).Info("workspace not engaged", "err", err)
		return reconcile.Result{}, nil
	}
	db := &postgresv1alpha1.Database{}
	if err := cl.GetClient().Get(ctx, req.NamespacedName, db); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	secrets, err := kubernetes.NewForConfigAndClient(cl.GetConfig(), cl.GetHTTPClient())
	if err != nil {
		return reconcile.Result{}, err
	}
	s := &state{db: db, secrets: secrets}
	s.database, s.role = Names(string(req.ClusterName), db.Namespace, db.Name, db.Spec.Owner)
	if db.Status.RoleName != "" && db.Status.DatabaseName == s.database {
		// The owner role made first stays (spec.owner changes are not
		// applied to an existing database).
		s.role = db.Status.RoleName
	}

	if !db.DeletionTimestamp.IsZero() {
		return reconcile.Result{}, r.delete(ctx, cl.GetClient(), s)
	}
	if controllerutil.AddFinalizer(db, Finalizer) {
		if err := cl.GetClient().Update(ctx, db); err != nil {
			return reconcile.Result{}, fmt.Errorf("adding finalizer: %w", err)
		}
	}
	before := db.Status.DeepCopy()
	db.Status.ObservedGeneration = db.Generation
	var errs []error
	for _, step := range []func(context.Context, *state) error{r.readCredentials, r.ensureDatabase, r.ensureExtensions, r.writeCredentials} {
		if err := step(ctx, s); err != nil {
			errs = append(errs, err)
			break
		}
	}
	setReady(s)
	if !equality.Semantic.DeepEqual(before, &db.Status) {
		if err := cl.GetClient().Status().Update(ctx, db); apierrors.IsConflict(err) {
			return reconcile.Result{RequeueAfter: conflictRetry}, nil
		} else if err != nil {
			errs = append(errs, fmt.Errorf("updating status: %w", err))
		}
	}
	var permanent *permanentError
	if err := errors.Join(errs...); err != nil && !errors.As(err, &permanent) {
		return reconcile.Result{}, err
	}
	return reconcile.Result{}, nil
}

// permanentError is reported on a condition and not retried (the spec must
// change first).
type permanentError struct{ msg string }

func (e *permanentError) Error() string { return e.msg }

// setCondition sets a condition at the current generation.
func setCondition(s *state, typ string, ok bool, reason, msg string) {
	st := metav1.ConditionFalse
	if ok {
		st = metav1.ConditionTrue
	}
	meta.SetStatusCondition(&s.db.Status.Conditions, metav1.Condition{Type: typ, Status: st, Reason: reason, Message: msg,
		ObservedGeneration: s.db.Generation})
}

// setReady sets Ready and the phase from the other conditions.
func setReady(s *state) {
	conds := s.db.Status.Conditions
	var notReady []string
	failed := false
	for _, typ := range []string{postgresv1alpha1.ConditionDatabase, postgresv1alpha1.ConditionExtensions, postgresv1alpha1.ConditionCredentials} {
		c := meta.FindStatusCondition(conds, typ)
		if c == nil || c.Status != metav1.ConditionTrue || c.ObservedGeneration != s.db.Generation {
			notReady = append(notReady, typ)
			if c != nil && (c.Reason == "UnknownExtension" || c.Reason == "ClaimNotAccepted" || c.Reason == "SecretExists") {
				failed = true
			}
		}
	}
	switch {
	case len(notReady) == 0:
		s.db.Status.Phase = postgresv1alpha1.PhaseReady
		setCondition(s, postgresv1alpha1.ConditionReady, true, "Ready", "database "+s.database+" is ready; credentials in Secret "+s.db.Status.SecretName)
	case failed:
		s.db.Status.Phase = postgresv1alpha1.PhaseFailed
		setCondition(s, postgresv1alpha1.ConditionReady, false, "Failed", fmt.Sprintf("not ready: %v", notReady))
	default:
		s.db.Status.Phase = postgresv1alpha1.PhasePending
		setCondition(s, postgresv1alpha1.ConditionReady, false, "NotReady", fmt.Sprintf("not ready: %v", notReady))
	}
}
