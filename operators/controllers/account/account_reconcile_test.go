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
		progress: newProgressWrites(0, 0), // every change written
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

func TestReconcileHoldsBackProgress(t *testing.T) {
	acc := org("acme")
	s1 := &fakeStep{cond: corev1alpha1.ConditionWorkspaceCreated, res: wait(time.Second)}
	r, _, statusUpdates := newTestReconciler(acc, s1)
	now := time.Unix(1000, 0)
	r.progress = newProgressWrites(5*time.Second, 30*time.Second)
	r.progress.now = func() time.Time { return now }
	ctx := context.Background()

	// A step still pending within the hold: nothing written, looked at
	// again within the hold.
	after, err := r.reconcile(ctx, "orgs", "acme")
	if err != nil || after != time.Second || *statusUpdates != 0 {
		t.Fatalf("fresh pending account: requeue %v, err %v, %d status writes; want 1s and none", after, err, *statusUpdates)
	}
	s1.res = wait(0) // waiting for an event only
	if after, _ := r.reconcile(ctx, "orgs", "acme"); after != 5*time.Second {
		t.Fatalf("requeue %v, want the end of the hold (5s)", after)
	}

	// Past the hold the progress is written, then held back again.
	now = now.Add(5 * time.Second)
	r.reconcile(ctx, "orgs", "acme")
	c := requireCondition(t, acc, corev1alpha1.ConditionReady, metav1.ConditionFalse, corev1alpha1.ReasonPending)
	if *statusUpdates != 1 || c.Message != corev1alpha1.ConditionWorkspaceCreated+": waiting" {
		t.Fatalf("after the hold: %d status writes, Ready %q; want one, naming the pending step", *statusUpdates, c.Message)
	}
	s2 := &fakeStep{cond: corev1alpha1.ConditionAccountInfoReady, res: wait(time.Second)}
	s1.res = next
	r.steps = append(r.steps, s2)
	now = now.Add(time.Second)
	r.reconcile(ctx, "orgs", "acme")
	if *statusUpdates != 1 {
		t.Fatalf("progress within the hold written (%d status writes)", *statusUpdates)
	}
	// The hold doubled: 5 s later is not enough, 10 s is.
	now = now.Add(4 * time.Second)
	r.reconcile(ctx, "orgs", "acme")
	if *statusUpdates != 1 {
		t.Fatalf("progress written 5 s after the last (%d status writes); want the hold doubled to 10 s", *statusUpdates)
	}
	now = now.Add(5 * time.Second)
	r.reconcile(ctx, "orgs", "acme")
	requireCondition(t, acc, corev1alpha1.ConditionAccountInfoReady, metav1.ConditionFalse, corev1alpha1.ReasonPending)
	if *statusUpdates != 2 {
		t.Fatalf("progress 10 s after the last: %d status writes, want 2", *statusUpdates)
	}

	// A failure is written at once.
	r.steps = []step{s1, failingStep{cond: corev1alpha1.ConditionAccountInfoReady}}
	r.reconcile(ctx, "orgs", "acme")
	requireCondition(t, acc, corev1alpha1.ConditionAccountInfoReady, metav1.ConditionFalse, corev1alpha1.ReasonError)
	if *statusUpdates != 3 {
		t.Fatalf("failure: %d status writes, want 3", *statusUpdates)
	}
	// So is its end, even when the step is only pending again.
	r.steps = []step{s1, s2}
	r.reconcile(ctx, "orgs", "acme")
	requireCondition(t, acc, corev1alpha1.ConditionAccountInfoReady, metav1.ConditionFalse, corev1alpha1.ReasonPending)
	if *statusUpdates != 4 {
		t.Fatalf("failure over: %d status writes, want 4", *statusUpdates)
	}

	// Ready is written at once, within the hold.
	s2.res = next
	r.reconcile(ctx, "orgs", "acme")
	requireCondition(t, acc, corev1alpha1.ConditionReady, metav1.ConditionTrue, corev1alpha1.ReasonReconciled)
	if *statusUpdates != 5 {
		t.Fatalf("Ready: %d status writes, want 5", *statusUpdates)
	}
	if len(r.progress.last) != 0 {
		t.Errorf("a Ready account is still remembered: %v", r.progress.last)
	}
}

// failingStep fails its condition.
type failingStep struct{ cond string }

func (f failingStep) reconcile(ctx context.Context, st *state) result {
	return failed(ctx, st.account, f.cond, errors.New("boom"))
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
