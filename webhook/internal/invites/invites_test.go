package invites

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	corev1alpha1 "github.com/meshplane/meshplane/apis/core/v1alpha1"
)

func email(v ...string) map[string]authorizationv1.ExtraValue {
	return map[string]authorizationv1.ExtraValue{DefaultExtraKey: v}
}

// Only the core's verified e-mail extra counts: never one of an
// impersonated request or a workspace issuer's user (scopes), of a
// system: user, with several values, or under another key.
func TestTrustedEmail(t *testing.T) {
	scoped := email("bob@example.com")
	scoped[ScopesExtraKey] = authorizationv1.ExtraValue{"cluster:abc"}
	for _, c := range []struct {
		name  string
		user  string
		extra map[string]authorizationv1.ExtraValue
		want  string
	}{
		{"verified e-mail", "oidc:bob", email("bob@example.com"), "bob@example.com"},
		{"no e-mail", "oidc:bob", nil, ""},
		{"empty", "oidc:bob", email(""), ""},
		{"two values", "oidc:bob", email("bob@example.com", "alice@example.com"), ""},
		{"no address", "oidc:bob", email("bob"), ""},
		{"impersonated or workspace issuer (scopes)", "oidc:bob", scoped, ""},
		{"system user", "system:admin", email("bob@example.com"), ""},
		{"another key", "oidc:bob", map[string]authorizationv1.ExtraValue{"email": {"bob@example.com"}}, ""},
	} {
		got, ok := TrustedEmail(DefaultExtraKey, c.user, c.extra)
		if got != c.want || ok != (c.want != "") {
			t.Errorf("%s: got %q %v, want %q", c.name, got, ok, c.want)
		}
	}
}

// A sign-in accepts the open Invites of its own workspace that name the
// address: not another workspace's, not an expired one, not one whose
// status closed it; once per invitation.
func TestObserve(t *testing.T) {
	now := time.Now()
	var mu sync.Mutex
	created := map[string]string{} // cluster/ra -> subject
	done := make(chan struct{}, 10)
	a := &Acceptor{ExtraKey: DefaultExtraKey, Now: func() time.Time { return now },
		Create: func(_ context.Context, cluster string, ra *corev1alpha1.RoleAssignment) error {
			mu.Lock()
			created[cluster+"/"+ra.Name] = ra.Spec.Subject.Name
			mu.Unlock()
			done <- struct{}{}
			return nil
		}}
	n := 0
	inv := func(name, addr string, expires time.Time) *corev1alpha1.Invite {
		n++
		return &corev1alpha1.Invite{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID(fmt.Sprintf("uid-%d", n))},
			Spec: corev1alpha1.InviteSpec{Email: addr, ExpiresAt: &metav1.Time{Time: expires}}}
	}
	a.Set("acme", "bob", inv("bob", "Bob@Example.com", now.Add(time.Hour)))
	a.Set("acme", "old", inv("old", "bob@example.com", now.Add(-time.Second)))
	closed := inv("closed", "bob@example.com", now.Add(time.Hour))
	closed.Status.Conditions = []metav1.Condition{{Type: corev1alpha1.ConditionAccepted, Status: metav1.ConditionFalse, Reason: corev1alpha1.ReasonExpired}}
	a.Set("acme", "closed", closed)
	a.Set("acme", "carol", inv("carol", "carol@example.com", now.Add(time.Hour)))
	a.Set("other", "bob", inv("bob", "bob@example.com", now.Add(time.Hour)))

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go a.Run(ctx)
	if a.Observe("acme", "oidc:mallory", email("mallory@example.com")) {
		t.Error("a sign-in with another address accepted an invitation")
	}
	if a.Observe("acme", "oidc:bob", nil) {
		t.Error("a sign-in without an e-mail accepted an invitation")
	}
	if !a.Observe("acme", "oidc:bob", email("bob@example.com")) {
		t.Fatal("bob's sign-in accepted nothing")
	}
	<-done
	// Under way: reported (the decider asks again), not queued twice.
	if !a.Observe("acme", "oidc:bob", email("bob@example.com")) {
		t.Error("bob's acceptance is not reported as under way")
	}
	now = now.Add(AcceptWindow)
	if a.Observe("acme", "oidc:bob", email("bob@example.com")) {
		t.Error("bob's acceptance is still reported as under way after AcceptWindow")
	}
	select {
	case <-done:
		t.Error("the same invitation was accepted twice at once")
	case <-time.After(100 * time.Millisecond):
	}
	mu.Lock()
	defer mu.Unlock()
	want := map[string]string{"acme/invite-bob": "oidc:bob"}
	if len(created) != len(want) || created["acme/invite-bob"] != "oidc:bob" {
		t.Fatalf("created %v, want %v", created, want)
	}
}
