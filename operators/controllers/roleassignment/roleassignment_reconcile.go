package roleassignment

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	corev1alpha1 "github.com/meshplane/meshplane/apis/core/v1alpha1"
	"github.com/meshplane/meshplane/apis/fga"
)

// Finalizer holds a RoleAssignment until its tuple is revoked.
const Finalizer = "core.platform-mesh.io/role-assignment"

// state is what the steps learn about one RoleAssignment.
type state struct {
	// cluster is the logical cluster the RoleAssignment lives in.
	cluster string
	ra      *corev1alpha1.RoleAssignment
	// account is the OpenFGA object of the workspace's account, storeID
	// its organization's store (set by resolve).
	account, storeID string
	// others are the tuples the other RoleAssignments of the workspace
	// grant (a tuple two of them grant stays while one is left).
	others map[corev1alpha1.Tuple]bool
	// workspaceGone: the workspace has no AccountInfo or its account's
	// Workspace is gone (set by resolve, read by deletion).
	workspaceGone bool
}

// want is the tuple the RoleAssignment grants.
func (s *state) want() corev1alpha1.Tuple {
	return corev1alpha1.Tuple{Object: s.account, Relation: s.ra.Spec.Role, User: subjectID(s.ra.Spec.Subject)}
}

// subjectID is a subject as a tuple's user: user:<name>, or
// group:<name>#member for every member of a group.
func subjectID(sub corev1alpha1.Subject) string {
	if sub.Kind == corev1alpha1.SubjectKindGroup {
		return fga.GroupMembers(sub.Name)
	}
	return fga.UserID(sub.Name)
}

// isGrantSubject reports whether u is a subject a RoleAssignment grants
// to: a user (no wildcard, no userset) or a group's members.
func isGrantSubject(u string) bool {
	if strings.HasPrefix(u, fga.UserType+":") {
		return !strings.ContainsAny(u, "#*")
	}
	g, ok := strings.CutSuffix(u, "#"+fga.RelationMember)
	return ok && strings.HasPrefix(g, fga.GroupType+":") && !strings.Contains(g, "#") && g != fga.GroupType+":*"
}

// revocable reports whether t may be deleted for this RoleAssignment: a
// grant's shape (a user's or a group's direct relation on this
// workspace's account, never an owner role, a parent or another object:
// status is not trusted) that no other RoleAssignment of the workspace
// grants.
func (s *state) revocable(t corev1alpha1.Tuple) bool {
	return isGrantSubject(t.User) && t.Object == s.account && t.Relation != fga.RelationParent && !s.others[t]
}

// result says whether the chain goes on.
type result struct {
	done         bool
	requeueAfter time.Duration
}

var next = result{done: true}

func wait(after time.Duration) result { return result{requeueAfter: after} }

type step interface {
	reconcile(ctx context.Context, s *state) result
}

type reconciler struct {
	get          func(ctx context.Context, cluster, name string) (*corev1alpha1.RoleAssignment, error)
	list         func(ctx context.Context, cluster string) ([]corev1alpha1.RoleAssignment, error)
	update       func(ctx context.Context, cluster string, ra *corev1alpha1.RoleAssignment) error
	updateStatus func(ctx context.Context, cluster string, ra *corev1alpha1.RoleAssignment) error

	resolve  *resolveStep
	role     *roleStep
	tuple    *tupleStep
	deletion *deletionStep
}

func (r *reconciler) reconcile(ctx context.Context, cluster, name string) (time.Duration, error) {
	logger := log.FromContext(ctx).WithValues("cluster", cluster, "roleAssignment", name)
	ctx = log.IntoContext(ctx, logger)
	ra, err := r.get(ctx, cluster, name)
	if err != nil {
		if gone(err) {
			return 0, nil
		}
		return 0, fmt.Errorf("getting RoleAssignment: %w", err)
	}
	before := ra.Status.DeepCopy()
	s := &state{cluster: cluster, ra: ra}

	if !ra.DeletionTimestamp.IsZero() {
		if !controllerutil.ContainsFinalizer(ra, Finalizer) {
			return 0, nil
		}
		if res := r.resolve.reconcile(ctx, s); res.done {
			if err := r.othersOf(ctx, s); err != nil {
				return 0, err
			}
			if res := r.deletion.reconcile(ctx, s); !res.done {
				return res.requeueAfter, r.writeStatus(ctx, s, before)
			}
		} else if !s.workspaceGone {
			// The workspace is still there but cannot be resolved now:
			// wait rather than leave a grant behind.
			return res.requeueAfter, r.writeStatus(ctx, s, before)
		}
		// A workspace being deleted loses every tuple on its account
		// through the security terminator.
		controllerutil.RemoveFinalizer(ra, Finalizer)
		if err := r.update(ctx, cluster, ra); err != nil && !gone(err) {
			return 0, fmt.Errorf("releasing finalizer: %w", err)
		}
		return 0, nil
	}
	if !controllerutil.ContainsFinalizer(ra, Finalizer) {
		controllerutil.AddFinalizer(ra, Finalizer)
		if err := r.update(ctx, cluster, ra); err != nil {
			if gone(err) {
				return 0, nil
			}
			return 0, fmt.Errorf("adding finalizer: %w", err)
		}
	}
	requeue := time.Duration(0)
	for _, stp := range []step{r.resolve, r.role, r.tuple} {
		if stp == r.tuple {
			if err := r.othersOf(ctx, s); err != nil {
				return 0, err
			}
		}
		if res := stp.reconcile(ctx, s); !res.done {
			requeue = res.requeueAfter
			break
		}
	}
	return requeue, r.writeStatus(ctx, s, before)
}

// othersOf collects the tuples the workspace's other RoleAssignments grant.
func (r *reconciler) othersOf(ctx context.Context, s *state) error {
	items, err := r.list(ctx, s.cluster)
	if err != nil {
		return fmt.Errorf("listing RoleAssignments: %w", err)
	}
	s.others = map[corev1alpha1.Tuple]bool{}
	for i := range items {
		o := &items[i]
		if o.UID == s.ra.UID || !o.DeletionTimestamp.IsZero() {
			continue
		}
		s.others[corev1alpha1.Tuple{Object: s.account, Relation: o.Spec.Role, User: subjectID(o.Spec.Subject)}] = true
	}
	return nil
}

func (r *reconciler) writeStatus(ctx context.Context, s *state, before *corev1alpha1.RoleAssignmentStatus) error {
	if equality.Semantic.DeepEqual(before, &s.ra.Status) {
		return nil
	}
	if err := r.updateStatus(ctx, s.cluster, s.ra); err != nil && !gone(err) {
		return fmt.Errorf("writing status: %w", err)
	}
	return nil
}

func setReady(ra *corev1alpha1.RoleAssignment, status metav1.ConditionStatus, reason, msg string) {
	meta.SetStatusCondition(&ra.Status.Conditions, metav1.Condition{
		Type: corev1alpha1.ConditionReady, Status: status, Reason: reason, Message: msg, ObservedGeneration: ra.Generation,
	})
}

func gone(err error) bool {
	return apierrors.IsNotFound(err) || errors.Is(err, errClusterGone)
}

var errClusterGone = errors.New("cluster is no longer served")
