package authzwebhook

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

const ns = "team"

// allow returns a decision function allowing user the verbs on resource
// in cluster, and nothing else.
func allow(user, cluster, resource string, verbs ...string) func(*authorizationv1.SubjectAccessReview) authorizationv1.SubjectAccessReviewStatus {
	return func(sar *authorizationv1.SubjectAccessReview) authorizationv1.SubjectAccessReviewStatus {
		ra := sar.Spec.ResourceAttributes
		if sar.Spec.User == user && ra != nil && ra.Resource == resource && slices.Contains(verbs, ra.Verb) &&
			slices.Equal(sar.Spec.Extra["authorization.kcp.io/cluster-name"], authorizationv1.ExtraValue{cluster}) {
			return authorizationv1.SubjectAccessReviewStatus{Allowed: true, Reason: "allowed by the test webhook"}
		}
		return authorizationv1.SubjectAccessReviewStatus{}
	}
}

func path(cluster, resource, name string) string {
	p := fmt.Sprintf("/clusters/%s/api/v1/namespaces/%s/%s", cluster, ns, resource)
	if name != "" {
		p += "/" + name
	}
	return p
}

// setup makes a logical cluster with namespace team holding a configmap
// and a secret.
func setup(t *testing.T, s *framework.Server, prefix string) (string, *framework.Kubectl) {
	t.Helper()
	cluster, admin := s.NewCluster(t, prefix)
	admin.Run(t, "create", "namespace", ns)
	admin.Run(t, "create", "configmap", "cfg", "-n", ns, "--from-literal=k=v")
	admin.Run(t, "create", "secret", "generic", "sec", "-n", ns, "--from-literal=k=v")
	return cluster, admin
}

// TestAllowedByWebhook checks that what RBAC does not allow, the webhook
// may, in the cluster it names, and that the review carries the cluster.
func TestAllowedByWebhook(t *testing.T) {
	s := framework.SharedServer(t)
	cluster, _ := setup(t, s, "e2e-wh-allow")
	other, _ := setup(t, s, "e2e-wh-other")
	bob := s.UserToken(t, "bob")

	framework.RequireStatus(t, s.Request(t, bob, "GET", path(cluster, "configmaps", ""), nil), "bob listing configmaps before the webhook allows it", 403, "Forbidden")

	hook.set(allow("bob", cluster, "configmaps", "get", "list"))
	t.Cleanup(func() { hook.set(noOpinion) })
	framework.RequireCode(t, s.Request(t, bob, "GET", path(cluster, "configmaps", ""), nil), "bob listing configmaps, allowed by the webhook", 200)
	framework.RequireCode(t, s.Request(t, bob, "GET", path(cluster, "configmaps", "cfg"), nil), "bob reading configmap cfg, allowed by the webhook", 200)
	framework.RequireStatus(t, s.Request(t, bob, "DELETE", path(cluster, "configmaps", "cfg"), nil), "bob deleting configmap cfg (the webhook has no opinion)", 403, "Forbidden")
	framework.RequireStatus(t, s.Request(t, bob, "GET", path(cluster, "secrets", ""), nil), "bob listing secrets (the webhook has no opinion)", 403, "Forbidden")
	framework.RequireStatus(t, s.Request(t, bob, "GET", path(other, "configmaps", ""), nil), "bob listing configmaps in another cluster", 403, "Forbidden")
	framework.RequireStatus(t, s.Request(t, s.UserToken(t, "carol"), "GET", path(cluster, "configmaps", ""), nil), "carol listing configmaps", 403, "Forbidden")
	kubectl := s.KubectlAsUser(t, "bob", cluster)
	framework.RequireContains(t, kubectl.Run(t, "get", "configmaps", "-n", ns, "-o", "name"), "configmap/cfg", "kubectl get configmaps as bob")

	var found *authorizationv1.SubjectAccessReview
	for _, r := range hook.reviews() {
		if r.Spec.User == "bob" && r.Spec.ResourceAttributes != nil && r.Spec.ResourceAttributes.Resource == "configmaps" &&
			r.Spec.ResourceAttributes.Name == "cfg" && r.Spec.ResourceAttributes.Verb == "get" {
			found = &r
			break
		}
	}
	if found == nil {
		t.Fatalf("the webhook received no review of bob's GET of configmap cfg; got %d reviews", len(hook.reviews()))
	}
	for _, key := range []string{"authorization.kcp.io/cluster-name", "authorization.kubernetes.io/cluster-name"} {
		if got := found.Spec.Extra[key]; !slices.Equal(got, authorizationv1.ExtraValue{cluster}) {
			t.Errorf("review spec.extra[%q] = %v, want [%s]", key, got, cluster)
		}
	}
	if ra := found.Spec.ResourceAttributes; ra.Namespace != ns || ra.Version != "v1" || ra.Group != "" {
		t.Errorf("review resourceAttributes = %+v, want namespace %s, version v1, core group", ra, ns)
	}
	if !slices.Contains(found.Spec.Groups, "system:authenticated") || found.Spec.UID != "uid-bob" {
		t.Errorf("review groups %v / uid %q: want system:authenticated and uid-bob", found.Spec.Groups, found.Spec.UID)
	}
}

// TestOrder checks kcp's order: RBAC before the webhook, so a webhook's
// denial does not take away what RBAC grants, and without a grant the
// webhook's denial (and its reason) stands.
func TestOrder(t *testing.T) {
	s := framework.SharedServer(t)
	cluster, admin := setup(t, s, "e2e-wh-order")
	bob := s.UserToken(t, "bob")
	hook.set(func(sar *authorizationv1.SubjectAccessReview) authorizationv1.SubjectAccessReviewStatus {
		return authorizationv1.SubjectAccessReviewStatus{Denied: true, Reason: "denied by the test webhook"}
	})
	t.Cleanup(func() { hook.set(noOpinion) })

	r := s.Request(t, bob, "GET", path(cluster, "configmaps", ""), nil)
	framework.RequireStatus(t, r, "bob listing configmaps, denied by the webhook", 403, "Forbidden")
	framework.RequireContains(t, r.Status(t).Message, "denied by the test webhook", "the 403's message")

	admin.Run(t, "create", "role", "cm-reader", "-n", ns, "--verb=get,list", "--resource=configmaps")
	admin.Run(t, "create", "rolebinding", "bob-cm-reader", "-n", ns, "--role=cm-reader", "--user=bob")
	framework.RequireCode(t, s.Request(t, bob, "GET", path(cluster, "configmaps", ""), nil), "bob listing configmaps with a RoleBinding, though the webhook denies", 200)
	framework.RequireStatus(t, s.Request(t, bob, "GET", path(cluster, "secrets", ""), nil), "bob listing secrets, denied by the webhook", 403, "Forbidden")
}

// TestWorkspaceAccess checks that a user without RBAC access to a
// workspace gets the webhook's decision (kcp leaves such users to the
// webhook), and the workspace's access denial otherwise.
func TestWorkspaceAccess(t *testing.T) {
	s := framework.SharedServer(t)
	ws := s.CreateOrg(t, "e2e-wh-ws")
	admin := s.KubectlFor(ws.Cluster)
	admin.Run(t, "create", "namespace", ns)
	admin.Run(t, "create", "configmap", "cfg", "-n", ns, "--from-literal=k=v")
	bob := s.UserToken(t, "bob")

	r := s.Request(t, bob, "GET", path(ws.Cluster, "configmaps", ""), nil)
	framework.RequireStatus(t, r, "bob listing configmaps in a workspace he has no access to", 403, "Forbidden")
	framework.RequireContains(t, r.Status(t).Message, "access to workspace", "the 403's message")

	hook.set(allow("bob", ws.Cluster, "configmaps", "list"))
	t.Cleanup(func() { hook.set(noOpinion) })
	framework.RequireCode(t, s.Request(t, bob, "GET", path(ws.Cluster, "configmaps", ""), nil), "bob listing configmaps in the workspace, allowed by the webhook", 200)
	framework.RequireCode(t, s.Request(t, bob, "GET", "/clusters/"+ws.Path+"/api/v1/namespaces/"+ns+"/configmaps", nil), "bob listing configmaps by workspace path", 200)
	framework.RequireStatus(t, s.Request(t, bob, "GET", path(ws.Cluster, "secrets", ""), nil), "bob listing secrets in the workspace", 403, "Forbidden")
}

// TestWebhookFailure checks that a failing (500) or stopped webhook never
// allows, while RBAC's grants keep working.
func TestWebhookFailure(t *testing.T) {
	s := framework.SharedServer(t)
	cluster, admin := setup(t, s, "e2e-wh-down")
	admin.Run(t, "create", "role", "cm-reader", "-n", ns, "--verb=get,list", "--resource=configmaps")
	admin.Run(t, "create", "rolebinding", "bob-cm-reader", "-n", ns, "--role=cm-reader", "--user=bob")
	bob := s.UserToken(t, "bob")
	hook.set(allow("bob", cluster, "secrets", "list"))
	t.Cleanup(func() {
		hook.setFailing(false)
		if err := hook.start(); err != nil && !strings.Contains(err.Error(), "address already in use") {
			t.Errorf("restarting the webhook: %v", err)
		}
		hook.set(noOpinion)
	})
	framework.RequireCode(t, s.Request(t, bob, "GET", path(cluster, "secrets", ""), nil), "bob listing secrets, allowed by the healthy webhook", 200)

	for _, c := range []struct {
		what    string
		breakIt func()
	}{
		{"the webhook answering 500", func() { hook.setFailing(true) }},
		{"the webhook stopped", func() { hook.setFailing(false); hook.stop() }},
	} {
		c.breakIt()
		framework.RequireCode(t, s.Request(t, bob, "GET", path(cluster, "configmaps", ""), nil), "bob listing configmaps (RBAC) with "+c.what, 200)
		framework.RequireStatus(t, s.Request(t, bob, "GET", path(cluster, "secrets", ""), nil), "bob listing secrets (webhook only) with "+c.what, 403, "Forbidden")
		framework.RequireStatus(t, s.Request(t, s.UserToken(t, "carol"), "GET", path(cluster, "configmaps", ""), nil), "carol listing configmaps with "+c.what, 403, "Forbidden")
	}
	if err := hook.start(); err != nil {
		t.Fatalf("restarting the webhook: %v", err)
	}
	// The core asks again after the breaker's back-off.
	eventuallyCode(t, s, bob, path(cluster, "secrets", ""), 200, "bob listing secrets once the webhook is back")
}

// eventuallyCode waits until a GET answers code.
func eventuallyCode(t *testing.T, s *framework.Server, token, p string, code int, what string) {
	t.Helper()
	framework.Eventually(t, 30*time.Second, 200*time.Millisecond, what, func() (bool, string) {
		r := s.RequestURL(t, token, "GET", s.BaseURL+p, "", nil)
		return r.Err == nil && r.Code == code, r.String()
	})
}

// TestWebhookHung checks a webhook that accepts reviews and never answers
// (as a SIGSTOPped one): what only the webhook allowed is denied, never
// allowed, RBAC's grants keep working, the core stops asking it (the
// breaker) instead of holding each request for a timeout, and once it
// answers again its grants come back.
func TestWebhookHung(t *testing.T) {
	s := framework.SharedServer(t)
	cluster, admin := setup(t, s, "e2e-wh-hung")
	admin.Run(t, "create", "role", "cm-reader", "-n", ns, "--verb=get,list", "--resource=configmaps")
	admin.Run(t, "create", "rolebinding", "bob-cm-reader", "-n", ns, "--role=cm-reader", "--user=bob")
	bob := s.UserToken(t, "bob")
	hook.set(allow("bob", cluster, "secrets", "list"))
	t.Cleanup(func() { hook.unhang(); hook.set(noOpinion) })
	framework.RequireCode(t, s.Request(t, bob, "GET", path(cluster, "secrets", ""), nil), "bob listing secrets, allowed by the answering webhook", 200)

	hook.hang()
	hook.set(allow("bob", cluster, "secrets", "list")) // clears the recorded reviews
	const sent = 6
	for i := 0; i < sent; i++ {
		framework.RequireStatus(t, s.Request(t, bob, "GET", path(cluster, "secrets", ""), nil),
			fmt.Sprintf("bob listing secrets (webhook only) with the webhook hung, request %d", i+1), 403, "Forbidden")
	}
	framework.RequireCode(t, s.Request(t, bob, "GET", path(cluster, "configmaps", ""), nil), "bob listing configmaps (RBAC) with the webhook hung", 200)
	framework.RequireStatus(t, s.Request(t, s.UserToken(t, "carol"), "GET", path(cluster, "secrets", ""), nil), "carol listing secrets with the webhook hung", 403, "Forbidden")
	asked := 0
	for _, r := range hook.reviews() {
		if r.Spec.User == "bob" && r.Spec.ResourceAttributes != nil && r.Spec.ResourceAttributes.Resource == "secrets" {
			asked++
		}
	}
	// The first request waits for the timeout and opens the breaker; a
	// probe may follow each back-off (1 s, 2 s, ...). Without the breaker
	// every request waits for the hung webhook.
	if asked == 0 || asked > sent/2 {
		t.Errorf("the hung webhook was asked %d times for %d denied requests; want at least once and at most %d (the core stops asking a webhook that does not answer)", asked, sent, sent/2)
	}

	hook.unhang()
	eventuallyCode(t, s, bob, path(cluster, "secrets", ""), 200, "bob listing secrets once the webhook answers again")
}

// TestRules checks that a SelfSubjectRulesReview shows the webhook's
// rules beside RBAC's.
func TestRules(t *testing.T) {
	s := framework.SharedServer(t)
	cluster, admin := setup(t, s, "e2e-wh-rules")
	admin.Run(t, "create", "role", "cm-reader", "-n", ns, "--verb=get", "--resource=configmaps")
	admin.Run(t, "create", "rolebinding", "bob-cm-reader", "-n", ns, "--role=cm-reader", "--user=bob")
	hook.set(noOpinion)
	out := s.KubectlAsUser(t, "bob", cluster).Run(t, "auth", "can-i", "--list", "-n", ns)
	for _, want := range []string{"secrets", "[get list]", "configmaps", "[get]"} {
		framework.RequireContains(t, out, want, "kubectl auth can-i --list as bob (webhook and RBAC rules)")
	}
	// Each rule once, though several authorizers grant the same (issue 23).
	// The URLs both system:discovery and system:public-info-viewer list
	// show once per role, as kcp's SelfSubjectRulesReview has them.
	lines := map[string]bool{}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if f := strings.Fields(l); len(f) > 0 && slices.Contains([]string{"[/healthz]", "[/livez]", "[/readyz]", "[/version]", "[/version/]"}, f[0]) {
			continue
		}
		if lines[l] {
			t.Errorf("kubectl auth can-i --list as bob repeats %q:\n%s", l, out)
		}
		lines[l] = true
	}
	var asked bool
	for _, r := range hook.reviews() {
		if r.Spec.User == "bob" && r.Spec.ResourceAttributes != nil && r.Spec.ResourceAttributes.Namespace == ns &&
			slices.Equal(r.Spec.Extra["authorization.kcp.io/cluster-name"], authorizationv1.ExtraValue{cluster}) {
			asked = true
		}
	}
	if !asked {
		t.Errorf("the webhook was not asked for bob's rules in namespace %s of cluster %s", ns, cluster)
	}
}

// TestRetryAfter checks that a 503 with Retry-After ("I cannot know this
// cluster yet") makes the core ask again rather than deny.
func TestRetryAfter(t *testing.T) {
	s := framework.SharedServer(t)
	cluster, _ := setup(t, s, "e2e-wh-retry")
	hook.set(allow("bob", cluster, "configmaps", "list"))
	hook.setUnavailable(1)
	t.Cleanup(func() { hook.setUnavailable(0); hook.set(noOpinion) })
	framework.RequireCode(t, s.Request(t, s.UserToken(t, "bob"), "GET", path(cluster, "configmaps", ""), nil),
		"bob listing configmaps after the webhook first answered 503", 200)
	if n := len(hook.reviews()); n < 2 {
		t.Errorf("the webhook was asked %d times; want the 503 and the retry", n)
	}
}
