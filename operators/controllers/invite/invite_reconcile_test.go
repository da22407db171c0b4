package invite

import (
	"context"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	corev1alpha1 "github.com/meshplane/meshplane/apis/core/v1alpha1"
)

// fakeWorkspace holds one workspace's Invites and RoleAssignments as plain
// maps the reconciler's function fields read and write.
type fakeWorkspace struct {
	invites map[string]*corev1alpha1.Invite
	grants  map[string]*corev1alpha1.RoleAssignment
}

func (w *fakeWorkspace) reconciler(now time.Time) *reconciler {
	return &reconciler{
		now: func() time.Time { return now },
		get: func(_ context.Context, _, name string) (*corev1alpha1.Invite, error) {
			return w.invites[name].DeepCopy(), nil
		},
		update: func(_ context.Context, _ string, inv *corev1alpha1.Invite) error {
			w.invites[inv.Name] = inv.DeepCopy()
			return nil
		},
		updateStatus: func(_ context.Context, _ string, inv *corev1alpha1.Invite) error {
			w.invites[inv.Name] = inv.DeepCopy()
			return nil
		},
		getGrant: func(_ context.Context, _, name string) (*corev1alpha1.RoleAssignment, error) {
			return w.grants[name].DeepCopy(), nil
		},
		createGrant: func(_ context.Context, _ string, ra *corev1alpha1.RoleAssignment) error {
			w.grants[ra.Name] = ra.DeepCopy()
			return nil
		},
		deleteGrant: func(_ context.Context, _ string, ra *corev1alpha1.RoleAssignment) error {
			delete(w.grants, ra.Name)
			return nil
		},
	}
}

func invite(name string, spec corev1alpha1.InviteSpec, created time.Time) *corev1alpha1.Invite {
	return &corev1alpha1.Invite{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name),
		CreationTimestamp: metav1.Time{Time: created}}, Spec: spec}
}

func state(inv *corev1alpha1.Invite) string {
	c := meta.FindStatusCondition(inv.Status.Conditions, corev1alpha1.ConditionAccepted)
	if c == nil {
		return ""
	}
	return string(c.Status) + "/" + c.Reason
}

func TestInviteStates(t *testing.T) {
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	ctx := context.Background()
	soon := &metav1.Time{Time: now.Add(time.Hour)}
	past := &metav1.Time{Time: now.Add(-time.Second)}
	for _, c := range []struct {
		name      string
		inv       *corev1alpha1.Invite
		grant     *corev1alpha1.RoleAssignment // existing RoleAssignment invite-<name>
		status    string                       // a status an owner wrote
		want      string
		wantGrant string // subject of invite-<name> afterwards ("" none)
	}{
		{name: "by user name: granted at once", inv: invite("bob", corev1alpha1.InviteSpec{User: "bob"}, now), want: "True/Accepted", wantGrant: "bob"},
		{name: "by e-mail: pending", inv: invite("erin", corev1alpha1.InviteSpec{Email: "erin@example.com"}, now), want: "False/Pending"},
		{name: "by user name, expired", inv: invite("old", corev1alpha1.InviteSpec{User: "bob", ExpiresAt: past}, now), want: "False/Expired"},
		{name: "default expiry: 7 days", inv: invite("week", corev1alpha1.InviteSpec{User: "bob"}, now.Add(-corev1alpha1.DefaultInviteLifetime)), want: "False/Expired"},
		{name: "by e-mail, expired", inv: invite("late", corev1alpha1.InviteSpec{Email: "erin@example.com", ExpiresAt: past}, now), want: "False/Expired"},
		{name: "status claiming Accepted grants nothing", inv: invite("forged", corev1alpha1.InviteSpec{User: "bob", ExpiresAt: soon}, now), status: "True/Accepted", want: "True/Accepted"},
		{name: "status claiming Expired grants nothing", inv: invite("closed", corev1alpha1.InviteSpec{User: "bob", ExpiresAt: soon}, now), status: "False/Expired", want: "False/Expired"},
		{name: "a RoleAssignment of that name it does not own", inv: invite("taken", corev1alpha1.InviteSpec{User: "bob"}, now),
			grant: &corev1alpha1.RoleAssignment{ObjectMeta: metav1.ObjectMeta{Name: "invite-taken"}, Spec: corev1alpha1.RoleAssignmentSpec{Subject: corev1alpha1.Subject{Kind: "User", Name: "mallory"}, Role: "owner"}},
			want:  "False/Error", wantGrant: "mallory"},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := &fakeWorkspace{invites: map[string]*corev1alpha1.Invite{c.inv.Name: c.inv}, grants: map[string]*corev1alpha1.RoleAssignment{}}
			if c.grant != nil {
				w.grants[c.grant.Name] = c.grant
			}
			if c.status != "" {
				st, reason, _ := strings.Cut(c.status, "/")
				setAccepted(c.inv, metav1.ConditionStatus(st), reason, "written by an owner")
			}
			if _, err := w.reconciler(now).reconcile(ctx, "c1", c.inv.Name); err != nil {
				t.Fatal(err)
			}
			got := w.invites[c.inv.Name]
			if state(got) != c.want {
				t.Errorf("state %q, want %q (%+v)", state(got), c.want, got.Status)
			}
			ra := w.grants[corev1alpha1.InviteRoleAssignmentName(c.inv.Name)]
			switch {
			case c.wantGrant == "" && ra != nil:
				t.Errorf("granted %+v, want nothing", ra.Spec)
			case c.wantGrant != "" && (ra == nil || ra.Spec.Subject.Name != c.wantGrant):
				t.Errorf("grant %v, want one for %s", ra, c.wantGrant)
			}
			if ra != nil && c.grant == nil && (!corev1alpha1.GrantOf(ra, got) || ra.Spec.Role != "member") {
				t.Errorf("the grant %+v is not the invitation's member grant", ra)
			}
		})
	}
}

// Accepted, then the owner deletes the grant: the invitation does not
// grant again. Deleting the Invite deletes its grant first.
func TestInviteGrantRemovedAndDeletion(t *testing.T) {
	now := time.Now()
	ctx := context.Background()
	inv := invite("bob", corev1alpha1.InviteSpec{User: "bob"}, now)
	w := &fakeWorkspace{invites: map[string]*corev1alpha1.Invite{"bob": inv}, grants: map[string]*corev1alpha1.RoleAssignment{}}
	r := w.reconciler(now)
	if _, err := r.reconcile(ctx, "c1", "bob"); err != nil {
		t.Fatal(err)
	}
	delete(w.grants, "invite-bob")
	if _, err := r.reconcile(ctx, "c1", "bob"); err != nil {
		t.Fatal(err)
	}
	if len(w.grants) != 0 || state(w.invites["bob"]) != "True/Accepted" {
		t.Fatalf("after its grant was deleted the invitation granted again: %v, %+v", w.grants, w.invites["bob"].Status)
	}

	inv2 := invite("carol", corev1alpha1.InviteSpec{User: "carol"}, now)
	w.invites["carol"] = inv2
	if _, err := r.reconcile(ctx, "c1", "carol"); err != nil {
		t.Fatal(err)
	}
	if w.grants["invite-carol"] == nil {
		t.Fatal("no grant for carol")
	}
	w.invites["carol"].DeletionTimestamp = &metav1.Time{Time: now}
	if _, err := r.reconcile(ctx, "c1", "carol"); err != nil {
		t.Fatal(err)
	}
	if w.grants["invite-carol"] != nil {
		t.Fatal("deleting the Invite left its grant")
	}
	if _, err := r.reconcile(ctx, "c1", "carol"); err != nil {
		t.Fatal(err)
	}
	if len(w.invites["carol"].Finalizers) != 0 {
		t.Fatalf("finalizer kept after the grant is gone: %v", w.invites["carol"].Finalizers)
	}
}
