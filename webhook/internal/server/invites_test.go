package server

import (
	"context"
	"net/http"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "github.com/meshplane/meshplane/apis/core/v1alpha1"
	"github.com/meshplane/meshplane/webhook/internal/invites"
)

// TestInvitationOnSignIn: a review from the user whose verified e-mail an
// open Invite of the workspace names creates the Invite's grant and is
// answered "retry" (503) until the grant is in OpenFGA, then allowed. The
// same address in a review with the scopes extra (impersonated, or a
// workspace issuer's user) accepts nothing and is answered at once.
func TestInvitationOnSignIn(t *testing.T) {
	f := newFixture(t, time.Hour)
	created := make(chan *v1alpha1.RoleAssignment, 4)
	a := &invites.Acceptor{ExtraKey: invites.DefaultExtraKey,
		Create: func(_ context.Context, c string, ra *v1alpha1.RoleAssignment) error {
			if c != cluster {
				t.Errorf("grant created in cluster %s, want %s", c, cluster)
			}
			created <- ra
			return nil
		}}
	f.decider.Invites = a
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go a.Run(ctx)
	a.Set(cluster, "erin", &v1alpha1.Invite{ObjectMeta: metav1.ObjectMeta{Name: "erin", UID: "u1", CreationTimestamp: metav1.Now()},
		Spec: v1alpha1.InviteSpec{Email: "erin@example.com", Role: "member"}})

	review := func(user string, extra map[string]authorizationv1.ExtraValue) authorizationv1.SubjectAccessReview {
		sar := reviewOf(user, "list", "configmaps", "default", "")
		for k, v := range extra {
			sar.Spec.Extra[k] = v
		}
		return sar
	}
	email := map[string]authorizationv1.ExtraValue{invites.DefaultExtraKey: {"erin@example.com"}}
	scoped := map[string]authorizationv1.ExtraValue{invites.DefaultExtraKey: {"erin@example.com"}, invites.ScopesExtraKey: {"cluster:" + cluster}}

	if st, code, _ := f.answer(t, review("oidc:mallory", scoped)); code != http.StatusOK || st.Allowed {
		t.Fatalf("a scoped review with erin's address: HTTP %d %+v, want a plain refusal", code, st)
	}
	select {
	case ra := <-created:
		t.Fatalf("a scoped review accepted the invitation: %+v", ra.Spec)
	case <-time.After(200 * time.Millisecond):
	}

	_, code, h := f.answer(t, review("oidc:erin", email))
	if code != http.StatusServiceUnavailable || h.Get("Retry-After") == "" {
		t.Fatalf("erin's first review: HTTP %d (Retry-After %q), want 503 with Retry-After while her grant is made", code, h.Get("Retry-After"))
	}
	ra := <-created
	if ra.Name != "invite-erin" || ra.Spec.Subject.Name != "oidc:erin" || ra.Spec.Role != "member" {
		t.Fatalf("grant %s %+v, want invite-erin giving oidc:erin member", ra.Name, ra.Spec)
	}
	// What the security-operator does with it, and the webhook's watch.
	f.write(t, []v1alpha1.Tuple{member("oidc:erin")}, nil)
	f.decider.GrantsChanged("acme")
	if st, code, _ := f.answer(t, review("oidc:erin", email)); code != http.StatusOK || !st.Allowed {
		t.Fatalf("erin once her grant is written: HTTP %d %+v, want allowed", code, st)
	}
}
