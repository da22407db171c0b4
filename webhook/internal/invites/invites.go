// Package invites turns invitations by e-mail address into grants when
// the invitee signs in. The core authenticates the invitee's OIDC token
// and, through its --authentication-config, puts a verified e-mail claim
// into the user's extra under one key; every SubjectAccessReview the
// webhook answers carries it. When a review about a workspace (or, in
// root:orgs, about an organization by name) comes from a user whose
// trusted e-mail address an open Invite of that workspace names, the
// Acceptor creates the Invite's RoleAssignment for that user (the
// security-operator's Invite controller then reports Accepted).
//
// Trusted is only an extra that the core's authentication put there: a
// review of an impersonated request, or of a user of a workspace's own
// issuer, carries the extra authentication.kcp.io/scopes (the core adds it
// to both), and its e-mail is ignored; so is a system: user's and any
// extra with more than one value. Only Invites of the review's own
// workspace are looked at, so a workspace admin impersonating someone in
// his own workspace could at most accept his own invitations.
package invites

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"

	corev1alpha1 "github.com/meshplane/meshplane/apis/core/v1alpha1"
)

// ScopesExtraKey marks impersonated requests and users of a workspace's
// own issuer (kcp's key; the core sets it).
const ScopesExtraKey = "authentication.kcp.io/scopes"

// DefaultExtraKey is the user extra the core's authentication
// configuration maps a verified e-mail claim to.
const DefaultExtraKey = "core.platform-mesh.io/verified-email"

// TrustedEmail returns the e-mail address a review's user signed in with,
// if it may be trusted (see the package documentation).
func TrustedEmail(key, user string, extra map[string]authorizationv1.ExtraValue) (string, bool) {
	if key == "" || user == "" || strings.HasPrefix(user, "system:") {
		return "", false
	}
	v := extra[key]
	if len(v) != 1 || v[0] == "" || !strings.Contains(v[0], "@") {
		return "", false
	}
	if _, scoped := extra[ScopesExtraKey]; scoped {
		return "", false
	}
	return v[0], true
}

// Acceptor keeps the open Invites by e-mail of every workspace and
// accepts them on sign-in.
type Acceptor struct {
	// ExtraKey is the trusted e-mail extra ("" turns acceptance off).
	ExtraKey string
	// Create creates a RoleAssignment in a logical cluster.
	Create func(ctx context.Context, cluster string, ra *corev1alpha1.RoleAssignment) error
	Log    logr.Logger
	// Now is the clock (time.Now when nil).
	Now func() time.Time

	mu sync.Mutex
	// byCluster holds the Invites by e-mail: cluster -> name -> Invite.
	byCluster map[string]map[string]*corev1alpha1.Invite
	// tried dedupes acceptances: invite uid -> when it was last tried.
	tried map[types.UID]time.Time
	work  chan acceptance
}

type acceptance struct {
	cluster, user string
	invite        *corev1alpha1.Invite
}

func (a *Acceptor) now() time.Time {
	if a.Now != nil {
		return a.Now()
	}
	return time.Now()
}

func (a *Acceptor) init() {
	if a.byCluster == nil {
		a.byCluster = map[string]map[string]*corev1alpha1.Invite{}
		a.tried = map[types.UID]time.Time{}
		a.work = make(chan acceptance, 256)
	}
}

// Set records an Invite of cluster (nil inv with name: deleted).
func (a *Acceptor) Set(cluster, name string, inv *corev1alpha1.Invite) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.init()
	if inv == nil || inv.Spec.Email == "" {
		if old := a.byCluster[cluster][name]; old != nil {
			delete(a.tried, old.UID)
		}
		delete(a.byCluster[cluster], name)
		if len(a.byCluster[cluster]) == 0 {
			delete(a.byCluster, cluster)
		}
		return
	}
	if a.byCluster[cluster] == nil {
		a.byCluster[cluster] = map[string]*corev1alpha1.Invite{}
	}
	a.byCluster[cluster][name] = inv
}

// Observe looks at one review of cluster: a trusted e-mail address that an
// open Invite of cluster names queues its acceptance for user. It never
// blocks and reports whether an acceptance for the user is under way
// (queued within AcceptWindow).
func (a *Acceptor) Observe(cluster, user string, extra map[string]authorizationv1.ExtraValue) bool {
	if a == nil {
		return false
	}
	email, ok := TrustedEmail(a.ExtraKey, user, extra)
	if !ok {
		return false
	}
	now := a.now()
	a.mu.Lock()
	defer a.mu.Unlock()
	a.init()
	accepting := false
	for _, inv := range a.byCluster[cluster] {
		if !strings.EqualFold(inv.Spec.Email, email) || !corev1alpha1.InviteOpen(inv, now) {
			continue
		}
		if last, ok := a.tried[inv.UID]; ok && now.Sub(last) < retryAfter {
			accepting = accepting || now.Sub(last) < AcceptWindow
			continue
		}
		select {
		case a.work <- acceptance{cluster: cluster, user: user, invite: inv}:
			a.tried[inv.UID] = now
			accepting = true
		default:
		}
	}
	return accepting
}

// AcceptWindow is how long after an acceptance was queued Observe still
// reports it as under way: the decider answers the invitee's refused
// requests with "retry" meanwhile, so his first request usually waits for
// the grant rather than being refused.
const AcceptWindow = 3 * time.Second

// retryAfter is how long an acceptance is not queued again.
const retryAfter = 5 * time.Second

// Run creates the grants of accepted invitations until ctx ends.
func (a *Acceptor) Run(ctx context.Context) {
	a.mu.Lock()
	a.init()
	work := a.work
	a.mu.Unlock()
	for {
		select {
		case <-ctx.Done():
			return
		case w := <-work:
			ra := corev1alpha1.InviteGrant(w.invite, w.user)
			err := a.Create(ctx, w.cluster, ra)
			switch {
			case err == nil:
				a.Log.Info("invitation accepted on sign-in", "cluster", w.cluster, "invite", w.invite.Name, "user", w.user, "role", ra.Spec.Role)
			case apierrors.IsAlreadyExists(err):
			default:
				a.Log.Error(err, "accepting invitation", "cluster", w.cluster, "invite", w.invite.Name, "user", w.user)
			}
		}
	}
}
