package account

import (
	"context"
	"errors"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/multicluster-runtime/pkg/multicluster"

	corev1alpha1 "github.com/meshplane/meshplane/apis/core/v1alpha1"
)

type fakeStep struct {
	cond string
	res  result
	runs int
}

func (f *fakeStep) reconcile(_ context.Context, st *state) result {
	f.runs++
	if f.res.done {
		return done(st.account, f.cond, "ok")
	}
	return pending(st.account, f.cond, f.res.requeueAfter, "waiting")
}

func newTestReconciler(acc *corev1alpha1.Account, steps ...step) (*reconciler, *int, *int) {
	updates, statusUpdates := 0, 0
	r := &reconciler{
		steps:    steps,
		deletion: &fakeStep{cond: corev1alpha1.ConditionReady, res: next},
		getAccount: func(context.Context, string, string) (*corev1alpha1.Account, error) {
			if acc == nil {
				return nil, multicluster.ErrClusterNotFound
			}
			return acc.DeepCopy(), nil
		},
		updateAccount: func(_ context.Context, _ string, a *corev1alpha1.Account) error {
			updates++
			acc.Finalizers = a.Finalizers
			return nil
		},
		updateStatus: func(_ context.Context, _ string, a *corev1alpha1.Account) error {
			statusUpdates++
			acc.Status = a.Status
			return nil
		},
	}
	return r, &updates, &statusUpdates
}

func TestReconcileRunsStepsInOrderAndSummarises(t *testing.T) {
	acc := org("acme")
	s1 := &fakeStep{cond: corev1alpha1.ConditionWorkspaceTypeReady, res: next}
	s2 := &fakeStep{cond: corev1alpha1.ConditionWorkspaceCreated, res: wait(time.Second)}
	s3 := &fakeStep{cond: corev1alpha1.ConditionAccountInfoReady, res: next}
	r, updates, _ := newTestReconciler(acc, s1, s2, s3)
	after, err := r.reconcile(context.Background(), "orgs", "acme")
	if err != nil || after != time.Second {
		t.Fatalf("reconcile = %v, %v; want requeue after 1s", after, err)
	}
	if s3.runs != 0 {
		t.Error("a step ran after one that was not done")
	}
	if !controllerutil.ContainsFinalizer(acc, Finalizer) || *updates != 1 {
		t.Errorf("finalizer not added (updates %d)", *updates)
	}
	c := requireCondition(t, acc, corev1alpha1.ConditionReady, metav1.ConditionFalse, corev1alpha1.ReasonPending)
	if c.Message != corev1alpha1.ConditionWorkspaceCreated+": waiting" {
		t.Errorf("Ready message = %q, want the first unfinished step's", c.Message)
	}

	s2.res = next
	if after, err := r.reconcile(context.Background(), "orgs", "acme"); err != nil || after != 0 {
		t.Fatalf("reconcile = %v, %v", after, err)
	}
	requireCondition(t, acc, corev1alpha1.ConditionReady, metav1.ConditionTrue, corev1alpha1.ReasonReconciled)
	if acc.Status.ObservedGeneration != 1 {
		t.Errorf("observedGeneration = %d", acc.Status.ObservedGeneration)
	}
}

func TestReconcileWritesStatusOnlyWhenChanged(t *testing.T) {
	acc := org("acme")
	r, _, statusUpdates := newTestReconciler(acc, &fakeStep{cond: corev1alpha1.ConditionWorkspaceCreated, res: next})
	r.reconcile(context.Background(), "orgs", "acme")
	r.reconcile(context.Background(), "orgs", "acme")
	if *statusUpdates != 1 {
		t.Errorf("status written %d times, want once", *statusUpdates)
	}
}

func TestReconcileGoneAccountOrCluster(t *testing.T) {
	r, _, _ := newTestReconciler(nil)
	if after, err := r.reconcile(context.Background(), "gone", "acme"); err != nil || after != 0 {
		t.Fatalf("a vanished cluster must end the reconcile quietly: %v %v", after, err)
	}
}

func TestReconcileDeletionReleasesFinalizer(t *testing.T) {
	acc := org("acme")
	acc.Finalizers = []string{Finalizer}
	now := metav1.Now()
	acc.DeletionTimestamp = &now
	r, updates, _ := newTestReconciler(acc)
	if _, err := r.reconcile(context.Background(), "orgs", "acme"); err != nil {
		t.Fatal(err)
	}
	if controllerutil.ContainsFinalizer(acc, Finalizer) || *updates != 1 {
		t.Fatalf("finalizer kept: %v", acc.Finalizers)
	}

	// A deletion that is not done keeps the finalizer and requeues.
	acc.Finalizers = []string{Finalizer}
	r.deletion = &fakeStep{cond: corev1alpha1.ConditionReady, res: wait(time.Second)}
	after, err := r.reconcile(context.Background(), "orgs", "acme")
	if err != nil || after != time.Second || !controllerutil.ContainsFinalizer(acc, Finalizer) {
		t.Fatalf("unfinished deletion: %v %v %v", after, err, acc.Finalizers)
	}
}

func TestGone(t *testing.T) {
	if !gone(multicluster.ErrClusterNotFound) || gone(errors.New("boom")) {
		t.Fatal("gone() misclassifies")
	}
}
