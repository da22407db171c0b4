package invite

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	corev1alpha1 "github.com/meshplane/meshplane/apis/core/v1alpha1"
)

// Finalizer holds an Invite until the grant it turned into is deleted.
const Finalizer = "core.platform-mesh.io/invite"

type reconciler struct {
	now          func() time.Time
	get          func(ctx context.Context, cluster, name string) (*corev1alpha1.Invite, error)
	update       func(ctx context.Context, cluster string, inv *corev1alpha1.Invite) error
	updateStatus func(ctx context.Context, cluster string, inv *corev1alpha1.Invite) error
	// getGrant returns the RoleAssignment of that name (nil: none).
	getGrant    func(ctx context.Context, cluster, name string) (*corev1alpha1.RoleAssignment, error)
	createGrant func(ctx context.Context, cluster string, ra *corev1alpha1.RoleAssignment) error
	deleteGrant func(ctx context.Context, cluster string, ra *corev1alpha1.RoleAssignment) error
}

// reconcile composes the steps: finalizer, deletion, then the grant
// (invite_reconcile_grant.go).
func (r *reconciler) reconcile(ctx context.Context, cluster, name string) (time.Duration, error) {
	logger := log.FromContext(ctx).WithValues("cluster", cluster, "invite", name)
	ctx = log.IntoContext(ctx, logger)
	inv, err := r.get(ctx, cluster, name)
	if err != nil {
		if gone(err) {
			return 0, nil
		}
		return 0, fmt.Errorf("getting Invite: %w", err)
	}
	if !inv.DeletionTimestamp.IsZero() {
		return r.deletion(ctx, cluster, inv)
	}
	if !controllerutil.ContainsFinalizer(inv, Finalizer) {
		controllerutil.AddFinalizer(inv, Finalizer)
		if err := r.update(ctx, cluster, inv); err != nil {
			if gone(err) {
				return 0, nil
			}
			return 0, fmt.Errorf("adding finalizer: %w", err)
		}
	}
	before := inv.Status.DeepCopy()
	after, err := r.grant(ctx, cluster, inv)
	if !equality.Semantic.DeepEqual(before, &inv.Status) {
		if uerr := r.updateStatus(ctx, cluster, inv); uerr != nil && !gone(uerr) {
			return 0, fmt.Errorf("writing status: %w", uerr)
		}
	}
	return after, err
}

func setAccepted(inv *corev1alpha1.Invite, status metav1.ConditionStatus, reason, msg string) {
	meta.SetStatusCondition(&inv.Status.Conditions, metav1.Condition{
		Type: corev1alpha1.ConditionAccepted, Status: status, Reason: reason, Message: msg, ObservedGeneration: inv.Generation,
	})
}
