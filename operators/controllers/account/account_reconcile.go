package account

import (
	"context"
	"errors"
	"fmt"
	"time"

	tenancyv1alpha1 "github.com/kcp-dev/sdk/apis/tenancy/v1alpha1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/multicluster-runtime/pkg/multicluster"

	corev1alpha1 "github.com/meshplane/meshplane/apis/core/v1alpha1"
)

// Finalizer holds an Account until its workspace is gone.
const Finalizer = "account.core.platform-mesh.io/finalizer"

// state is what the steps learn about one Account as they run.
type state struct {
	// cluster is the logical cluster the Account is in.
	cluster string
	account *corev1alpha1.Account
	// org is the organization's name (the Account's own for an org).
	org string
	// workspace is the Account's Workspace, once step 2 found it.
	workspace *tenancyv1alpha1.Workspace
	// parent is the AccountInfo of the workspace the Account is in (accounts only).
	parent *corev1alpha1.AccountInfo
}

// result says whether the chain goes on.
type result struct {
	// done: the step's condition is True; the next step runs.
	done bool
	// requeueAfter is when to look again when not done (0: on the next event).
	requeueAfter time.Duration
}

var next = result{done: true}

func wait(after time.Duration) result { return result{requeueAfter: after} }

// step is one reconcile step. It sets its own condition on s.account.
type step interface {
	reconcile(ctx context.Context, s *state) result
}

// reconciler composes the steps.
type reconciler struct {
	steps    []step
	deletion step

	getAccount    func(ctx context.Context, cluster, name string) (*corev1alpha1.Account, error)
	updateAccount func(ctx context.Context, cluster string, a *corev1alpha1.Account) error
	updateStatus  func(ctx context.Context, cluster string, a *corev1alpha1.Account) error

	// progress holds back the status writes that only report progress.
	progress *progressWrites
}

// reconcile runs the chain for one Account; requeueAfter > 0 asks for
// another look.
func (r *reconciler) reconcile(ctx context.Context, cluster, name string) (time.Duration, error) {
	logger := log.FromContext(ctx).WithValues("cluster", cluster, "account", name)
	ctx = log.IntoContext(ctx, logger)

	key := cluster + "/" + name
	acc, err := r.getAccount(ctx, cluster, name)
	if err != nil {
		if gone(err) {
			logger.V(1).Info("account is gone")
			r.progress.forget(key)
			return 0, nil
		}
		return 0, fmt.Errorf("getting account: %w", err)
	}
	s := &state{cluster: cluster, account: acc}
	before := acc.Status.DeepCopy()

	if !acc.DeletionTimestamp.IsZero() {
		r.progress.forget(key)
		if !controllerutil.ContainsFinalizer(acc, Finalizer) {
			return 0, nil
		}
		res := r.deletion.reconcile(ctx, s)
		if !res.done {
			return res.requeueAfter, r.writeStatus(ctx, cluster, acc, before)
		}
		controllerutil.RemoveFinalizer(acc, Finalizer)
		if err := r.updateAccount(ctx, cluster, acc); err != nil && !gone(err) {
			return 0, fmt.Errorf("releasing finalizer: %w", err)
		}
		logger.Info("account deleted: its workspace is gone")
		return 0, nil
	}

	if !controllerutil.ContainsFinalizer(acc, Finalizer) {
		controllerutil.AddFinalizer(acc, Finalizer)
		if err := r.updateAccount(ctx, cluster, acc); err != nil {
			if gone(err) {
				return 0, nil
			}
			return 0, fmt.Errorf("adding finalizer: %w", err)
		}
	}

	var requeue time.Duration
	allDone := true
	for _, st := range r.steps {
		res := st.reconcile(ctx, s)
		if !res.done {
			allDone, requeue = false, res.requeueAfter
			break
		}
	}
	if allDone {
		setReady(acc, metav1.ConditionTrue, corev1alpha1.ReasonReconciled, "the account's workspace is ready")
	} else {
		reason, msg := firstNotDone(acc)
		setReady(acc, metav1.ConditionFalse, reason, msg)
	}
	acc.Status.ObservedGeneration = acc.Generation
	if equality.Semantic.DeepEqual(before, &acc.Status) {
		return requeue, nil
	}
	if progressOnly(before, &acc.Status) {
		if ok, wait := r.progress.due(key); !ok {
			logger.V(2).Info("progress not written yet", "for", wait)
			return sooner(requeue, wait), nil
		}
	} else {
		r.progress.forget(key)
	}
	return requeue, r.putStatus(ctx, cluster, acc)
}

// sooner is the earlier of two requeues (0: none).
func sooner(a, b time.Duration) time.Duration {
	if a == 0 || (b > 0 && b < a) {
		return b
	}
	return a
}

// writeStatus writes the status if it changed from before.
func (r *reconciler) writeStatus(ctx context.Context, cluster string, acc *corev1alpha1.Account, before *corev1alpha1.AccountStatus) error {
	if equality.Semantic.DeepEqual(before, &acc.Status) {
		return nil
	}
	return r.putStatus(ctx, cluster, acc)
}

// putStatus writes the Account's status; an Account already gone is no
// error.
func (r *reconciler) putStatus(ctx context.Context, cluster string, acc *corev1alpha1.Account) error {
	if err := r.updateStatus(ctx, cluster, acc); err != nil && !gone(err) {
		return fmt.Errorf("writing status: %w", err)
	}
	return nil
}

// stepConditions are the conditions of the steps, in order.
var stepConditions = []string{
	corev1alpha1.ConditionWorkspaceTypeReady,
	corev1alpha1.ConditionWorkspaceCreated,
	corev1alpha1.ConditionAccountInfoReady,
	corev1alpha1.ConditionWorkspaceReady,
}

func firstNotDone(acc *corev1alpha1.Account) (string, string) {
	for _, t := range stepConditions {
		if c := meta.FindStatusCondition(acc.Status.Conditions, t); c != nil && c.Status != metav1.ConditionTrue {
			return c.Reason, t + ": " + c.Message
		}
	}
	return corev1alpha1.ReasonPending, "reconciling"
}

func setReady(acc *corev1alpha1.Account, status metav1.ConditionStatus, reason, msg string) {
	setCondition(acc, corev1alpha1.ConditionReady, status, reason, msg)
}

// setCondition sets one condition; the transition time changes only with
// the status.
func setCondition(acc *corev1alpha1.Account, t string, status metav1.ConditionStatus, reason, msg string) {
	meta.SetStatusCondition(&acc.Status.Conditions, metav1.Condition{
		Type: t, Status: status, Reason: reason, Message: msg, ObservedGeneration: acc.Generation,
	})
}

// done marks a step's condition True.
func done(acc *corev1alpha1.Account, t, msg string) result {
	setCondition(acc, t, metav1.ConditionTrue, corev1alpha1.ReasonReconciled, msg)
	return next
}

// pending marks a step's condition False, waiting for something.
func pending(acc *corev1alpha1.Account, t string, after time.Duration, format string, args ...any) result {
	setCondition(acc, t, metav1.ConditionFalse, corev1alpha1.ReasonPending, fmt.Sprintf(format, args...))
	return wait(after)
}

// failed marks a step's condition False with the error, logs it, and
// retries later.
func failed(ctx context.Context, acc *corev1alpha1.Account, t string, err error) result {
	log.FromContext(ctx).Error(err, "reconcile step failed", "condition", t)
	setCondition(acc, t, metav1.ConditionFalse, corev1alpha1.ReasonError, err.Error())
	return wait(5 * time.Second)
}

// gone reports errors that mean "the object, or its whole workspace, no
// longer exists": nothing is left to do.
func gone(err error) bool {
	return apierrors.IsNotFound(err) || errors.Is(err, multicluster.ErrClusterNotFound)
}
