package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	corev1alpha1 "github.com/meshplane/meshplane/apis/core/v1alpha1"
	"github.com/meshplane/meshplane/sdk/testing/framework"
	"github.com/meshplane/meshplane/sdk/testing/oidcissuer"
)

// emailExtraKey is the rebac-authz-webhook's default
// --invite-email-extra-key.
const emailExtraKey = "core.platform-mesh.io/verified-email"

// oidcPlatform is a platform whose core also trusts a test OIDC issuer:
// users oidc:<sub>, and a verified e-mail claim (email_verified true or
// absent) mapped into the extra the webhook reads.
type oidcPlatform struct {
	*platform
	issuer *oidcissuer.Issuer
}

func startOIDCPlatform(t *testing.T) *oidcPlatform {
	t.Helper()
	srv, err := oidcissuer.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	iss, err := srv.NewIssuer("corp", oidcissuer.ES256)
	if err != nil {
		t.Fatal(err)
	}
	ca := "      " + strings.ReplaceAll(strings.TrimRight(srv.CAPEM(), "\n"), "\n", "\n      ")
	config := fmt.Sprintf(`apiVersion: apiserver.config.k8s.io/v1
kind: AuthenticationConfiguration
jwt:
- issuer:
    url: %s
    audiences: [meshplane]
    certificateAuthority: |
%s
  claimMappings:
    username: {claim: sub, prefix: "oidc:"}
    extra:
    - key: %s
      valueExpression: "claims.?email_verified.orValue(true) == true && has(claims.email) ? claims.email : ''"
`, iss.URL, ca, emailExtraKey)
	file := filepath.Join(t.TempDir(), "authentication.yaml")
	if err := os.WriteFile(file, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	return &oidcPlatform{platform: startPlatform(t, "--authentication-config", file), issuer: iss}
}

// token is a token of the issuer for oidc:<sub> with more claims.
func (p *oidcPlatform) token(sub string, claims oidcissuer.Claims) string {
	c := oidcissuer.Claims{"sub": sub, "aud": "meshplane"}
	for k, v := range claims {
		c[k] = v
	}
	return p.issuer.Token(c, time.Hour)
}

// withToken runs kubectl with a bearer token against a workspace.
func (p *oidcPlatform) withToken(t *testing.T, token, workspace, stdin string, args ...string) (string, error) {
	t.Helper()
	full := append([]string{"--kubeconfig", p.kubeconfig, "--context", "bob", "--token", token,
		"--server", p.env["CORE_URL"] + "/clusters/" + workspace, "--request-timeout", "90s"}, args...)
	cmd := exec.Command(framework.KubectlBinary(), full...)
	cmd.Env = append(os.Environ(), "KUBECACHEDIR="+t.TempDir())
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// impersonating is a clientset of a workspace with a bearer token that
// impersonates user with the e-mail extra.
func (p *oidcPlatform) impersonating(t *testing.T, token, workspace, user, email string) *kubernetes.Clientset {
	t.Helper()
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		&clientcmd.ClientConfigLoadingRules{ExplicitPath: p.kubeconfig},
		&clientcmd.ConfigOverrides{CurrentContext: "bob", ClusterInfo: clientcmdapi.Cluster{Server: p.env["CORE_URL"] + "/clusters/" + workspace}}).ClientConfig()
	if err != nil {
		t.Fatal(err)
	}
	cfg.BearerToken, cfg.BearerTokenFile = token, ""
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user, Extra: map[string][]string{emailExtraKey: {email}}}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// wsWithToken runs the kubectl-ws plugin with a bearer token (as bob's
// context on a copy of the kubeconfig).
func (p *oidcPlatform) wsWithToken(t *testing.T, token string, args ...string) (string, error) {
	t.Helper()
	data, err := os.ReadFile(p.kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kc, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(framework.KubectlBinary(), "--kubeconfig", kc, "config", "set-credentials", "bob", "--token", token).CombinedOutput(); err != nil {
		t.Fatalf("setting the token: %v\n%s", err, out)
	}
	bin, err := framework.Binary("kubectl-ws", "core", "./cmd/kubectl-ws")
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, append([]string{"--kubeconfig", kc, "--context", "bob"}, args...)...).CombinedOutput()
	return string(out), err
}

// withHeaders is a clientset of a workspace with a bearer token that
// sends more headers.
func (p *oidcPlatform) withHeaders(t *testing.T, token, workspace string, headers map[string]string) *kubernetes.Clientset {
	t.Helper()
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		&clientcmd.ClientConfigLoadingRules{ExplicitPath: p.kubeconfig},
		&clientcmd.ConfigOverrides{CurrentContext: "bob", ClusterInfo: clientcmdapi.Cluster{Server: p.env["CORE_URL"] + "/clusters/" + workspace}}).ClientConfig()
	if err != nil {
		t.Fatal(err)
	}
	cfg.BearerToken, cfg.BearerTokenFile = token, ""
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		return roundTripper(func(r *http.Request) (*http.Response, error) {
			r = r.Clone(r.Context())
			for k, v := range headers {
				r.Header.Set(k, v)
			}
			return rt.RoundTrip(r)
		})
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func inviteYAML(name, spec string) string {
	return fmt.Sprintf("apiVersion: core.platform-mesh.io/v1alpha1\nkind: Invite\nmetadata:\n  name: %s\nspec:\n%s", name, spec)
}

// inviteState is the reason of an Invite's Accepted condition.
func (p *platform) inviteState(t *testing.T, workspace, name string) string {
	t.Helper()
	out, _ := p.kubectl(t, "alice", workspace, "", "get", "invite", name, "-o", `jsonpath={.status.conditions[?(@.type=="Accepted")].reason}`)
	return strings.TrimSpace(out)
}

func (p *platform) waitInvite(t *testing.T, workspace, name, state string) {
	t.Helper()
	framework.Eventually(t, 60*time.Second, 250*time.Millisecond, "Invite "+name+" to be "+state, func() (bool, string) {
		got := p.inviteState(t, workspace, name)
		return got == state, got
	})
}

// TestInvitations is issue 23's walk-through driven by invitations. alice
// founds inviteorg and invites bob by name as member and carol as owner.
// bob reads, navigates with kubectl ws, lists the invitations, but may not
// write, delete accounts or invite; carol (owner by invitation) invites
// and grants. An invitation by e-mail is accepted by the first request of
// the user whose token carries that address as a verified claim, and by
// nobody else: not a token without the e-mail, with another address, with
// the address unverified, an impersonated e-mail (refused in inviteorg;
// in the attacker's own organization ignored), an Invite an outsider
// creates in inviteorg (refused). Expired invitations never grant, also
// one that expires while pending. alice
// removes bob by deleting his Invite (time to his first refusal logged).
// alice's ownership survives deleting grants and invitations, a restart
// and a SIGKILL of the security-operator. Outsiders list no organization.
func TestInvitations(t *testing.T) {
	p := startOIDCPlatform(t)
	const org = "root:orgs:inviteorg"
	p.must(t, "alice", "root:orgs", account("inviteorg", "org"), "create", "-f", "-")
	p.must(t, "alice", "root:orgs", "", "wait", "--for=condition=Ready", "account/inviteorg", "--timeout=120s")
	p.eventually(t, "alice to list the accounts of her organization", true, "alice", org, "get", "accounts")
	p.must(t, "alice", org, account("team", "account"), "create", "-f", "-")
	p.eventually(t, "alice to create a namespace in inviteorg", true, "alice", org, "create", "namespace", "apps")

	f, origin, storeID := p.orgStore(t, org)
	aliceOwns := p.founderOwns(t, f, origin, storeID, "alice", "inviteorg")

	// The spec's rules are the server's: exactly one of email and user,
	// and no change after creation.
	out, err := p.kubectl(t, "alice", org, inviteYAML("nobody", "  role: member\n"), "create", "-f", "-")
	framework.RequireFails(t, "", out, err, "an Invite naming nobody", "exactly one of email and user")
	out, err = p.kubectl(t, "alice", org, inviteYAML("both", "  user: bob\n  email: bob@example.com\n"), "create", "-f", "-")
	framework.RequireFails(t, "", out, err, "an Invite naming a user and an e-mail", "exactly one of email and user")

	// alice invites bob (member) and carol (owner) by user name.
	out, err = p.kubectl(t, "bob", org, "", "get", "accounts")
	framework.RequireFails(t, "", out, err, "bob in inviteorg before his invitation", "Forbidden")
	bob := p.clientset(t, "bob", org)
	start := time.Now()
	p.must(t, "alice", org, inviteYAML("bob", "  user: bob\n  role: member\n"), "create", "-f", "-")
	granted := latency(t, bob, start, true, "bob to read once invited")
	p.must(t, "alice", org, inviteYAML("carol", "  user: carol\n  role: owner\n"), "create", "-f", "-")
	p.waitInvite(t, org, "bob", corev1alpha1.ReasonAccepted)
	p.waitInvite(t, org, "carol", corev1alpha1.ReasonAccepted)
	out, err = p.kubectl(t, "alice", org, "", "patch", "invite", "bob", "--type=merge", "-p", `{"spec":{"role":"owner"}}`)
	framework.RequireFails(t, "", out, err, "changing an Invite's role", "immutable")
	framework.RequireContains(t, p.must(t, "alice", org, "", "get", "invite", "bob", "-o", "jsonpath={.status.acceptedBy}/{.status.roleAssignment}"),
		"bob/invite-bob", "bob's Invite status")

	// bob reads, navigates, lists the invitations; writes nothing.
	p.must(t, "bob", org, "", "get", "accounts")
	p.must(t, "bob", org, "", "get", "invites")
	p.wsMust(t, "bob", "use", org)
	for _, c := range [][]string{
		{"create", "configmap", "x", "-n", "apps"},
		{"delete", "account", "team"},
		{"patch", "account", "team", "--type=merge", "-p", `{"spec":{"displayName":"mine"}}`},
		{"delete", "invite", "carol"},
	} {
		out, err := p.kubectl(t, "bob", org, "", c...)
		framework.RequireFails(t, "", out, err, "bob (a member) running "+strings.Join(c, " "), "Forbidden")
	}
	out, err = p.kubectl(t, "bob", org, inviteYAML("bob-friend", "  user: mallory\n  role: owner\n"), "create", "-f", "-")
	framework.RequireFails(t, "", out, err, "bob (a member) inviting", "Forbidden")

	// carol, owner by invitation, invites dave and grants erin.
	p.eventuallyAs(t, "carol (owner by invitation) to invite dave", true, "carol", org, "create", "--raw",
		"/clusters/"+org+"/apis/core.platform-mesh.io/v1alpha1/invites", "-f", "testdata/dave-invite.json")
	p.runMust(t, "carol", org, roleAssignment("erin-member", "erin", "member"), "create", "-f", "-")
	p.eventuallyAs(t, "dave to read once carol invited him", true, "dave", org, "get", "configmaps", "-n", "apps")
	p.eventuallyAs(t, "erin to read once carol granted her", true, "erin", org, "get", "configmaps", "-n", "apps")
	p.runMust(t, "carol", org, "", "delete", "--raw", "/clusters/"+org+"/apis/core.platform-mesh.io/v1alpha1/invites/dave")
	p.eventuallyAs(t, "dave to be refused once carol deleted his invitation", false, "dave", org, "get", "configmaps", "-n", "apps")
	p.runMust(t, "carol", org, "", "delete", "--raw", "/clusters/"+org+"/apis/core.platform-mesh.io/v1alpha1/roleassignments/erin-member")
	aliceOwns("invitations and grants deleted by carol")

	// Expired invitations never grant.
	p.must(t, "alice", org, inviteYAML("frank", "  user: frank\n  expiresAt: \"2020-01-01T00:00:00Z\"\n"), "create", "-f", "-")
	p.waitInvite(t, org, "frank", corev1alpha1.ReasonExpired)
	out, err = p.run(t, "frank", org, "", "get", "configmaps", "-n", "apps")
	framework.RequireFails(t, "", out, err, "frank after an expired invitation", "Forbidden")

	// Invitations by e-mail.
	p.must(t, "alice", org, inviteYAML("gina", "  email: gina@example.com\n"), "create", "-f", "-")
	p.must(t, "alice", org, inviteYAML("late", "  email: late@example.com\n  expiresAt: \"2020-01-01T00:00:00Z\"\n"), "create", "-f", "-")
	p.waitInvite(t, org, "gina", corev1alpha1.ReasonPending)
	p.waitInvite(t, org, "late", corev1alpha1.ReasonExpired)

	// mallory, an outsider with a token of the same issuer, founds her own
	// organization and tries every way to claim gina's invitation.
	mallory := p.token("mallory", oidcissuer.Claims{"email": "mallory@example.com", "email_verified": true})
	if out, err := p.withToken(t, mallory, "root:orgs", account("evilorg", "org"), "create", "-f", "-"); err != nil {
		t.Fatalf("mallory founding evilorg: %v\n%s", err, out)
	}
	framework.Eventually(t, 120*time.Second, 500*time.Millisecond, "mallory's organization to be ready", func() (bool, string) {
		out, err := p.withToken(t, mallory, "root:orgs:evilorg", "", "get", "accounts")
		return err == nil, out
	})
	attempts := []struct{ what, token string }{
		{"a token without an e-mail", p.token("gina", nil)},
		{"a token with another address", mallory},
		{"gina's address unverified", p.token("gina2", oidcissuer.Claims{"email": "gina@example.com", "email_verified": false})},
	}
	for _, a := range attempts {
		out, err := p.withToken(t, a.token, org, "", "get", "accounts")
		framework.RequireFails(t, "", out, err, a.what+" in inviteorg", "Forbidden")
	}
	// Front-proxy identity headers naming gina's address, sent with a
	// token: the core takes them only from its front proxy's client
	// certificate.
	for _, h := range []string{"X-Remote-Extra-" + strings.ReplaceAll(emailExtraKey, "/", "%2f"), "X-Remote-User"} {
		_, err = p.withHeaders(t, p.token("gina3", nil), org, map[string]string{h: "gina@example.com"}).CoreV1().Namespaces().List(context.Background(), metav1.ListOptions{})
		if err == nil || !strings.Contains(err.Error(), "forbidden") {
			t.Fatalf("a token with the header %s naming gina's address in inviteorg: %v", h, err)
		}
	}
	// Impersonating gina's address: refused in inviteorg, ignored in
	// mallory's own organization, where she may impersonate.
	_, err = p.impersonating(t, mallory, org, "oidc:mallory", "gina@example.com").CoreV1().Namespaces().List(context.Background(), metav1.ListOptions{})
	if err == nil || !strings.Contains(err.Error(), "forbidden") {
		t.Fatalf("mallory impersonating gina's address in inviteorg: %v", err)
	}
	framework.Eventually(t, 60*time.Second, 500*time.Millisecond, "mallory to impersonate in her own organization", func() (bool, string) {
		_, err := p.impersonating(t, mallory, "root:orgs:evilorg", "oidc:mallory", "gina@example.com").CoreV1().Namespaces().List(context.Background(), metav1.ListOptions{})
		return err == nil, fmt.Sprint(err)
	})
	// In her own organization, where she may impersonate anybody, an
	// impersonated address claims not even her own invitation: she
	// invites victim@example.com there and impersonates oidc:nobody with
	// that address (a request RBAC refuses, so the webhook sees it).
	evil := "root:orgs:evilorg"
	if out, err := p.withToken(t, mallory, evil, inviteYAML("victim", "  email: victim@example.com\n"), "create", "-f", "-"); err != nil {
		t.Fatalf("mallory inviting into her own organization: %v\n%s", err, out)
	}
	framework.Eventually(t, 60*time.Second, 250*time.Millisecond, "mallory's invitation to be Pending", func() (bool, string) {
		out, _ := p.withToken(t, mallory, evil, "", "get", "invite", "victim", "-o", `jsonpath={.status.conditions[?(@.type=="Accepted")].reason}`)
		return strings.TrimSpace(out) == corev1alpha1.ReasonPending, out
	})
	for range 3 {
		_, err = p.impersonating(t, mallory, evil, "oidc:nobody", "victim@example.com").CoreV1().ConfigMaps("default").List(context.Background(), metav1.ListOptions{})
		if err == nil || !strings.Contains(err.Error(), "forbidden") {
			t.Fatalf("oidc:nobody (impersonated) listing configmaps in evilorg: %v", err)
		}
		time.Sleep(time.Second)
	}
	if out, _ := p.withToken(t, mallory, evil, "", "get", "invite", "victim", "-o", `jsonpath={.status.conditions[?(@.type=="Accepted")].reason}/{.status.acceptedBy}`); strings.TrimSpace(out) != corev1alpha1.ReasonPending+"/" {
		t.Fatalf("an impersonated e-mail address accepted an invitation: %s", out)
	}
	// An Invite she creates in inviteorg: refused.
	// (a raw POST: she may not even read inviteorg's discovery)
	out, err = p.withToken(t, mallory, org, `{"apiVersion":"core.platform-mesh.io/v1alpha1","kind":"Invite","metadata":{"name":"mallory"},"spec":{"user":"oidc:mallory","role":"owner"}}`,
		"create", "--raw", "/clusters/"+org+"/apis/core.platform-mesh.io/v1alpha1/invites", "-f", "-")
	framework.RequireFails(t, "", out, err, "mallory inviting herself into inviteorg", "Forbidden")
	// The late invitee signs in: the expired invitation stays expired.
	late := p.token("late", oidcissuer.Claims{"email": "late@example.com", "email_verified": true})
	out, err = p.withToken(t, late, org, "", "get", "accounts")
	framework.RequireFails(t, "", out, err, "the invitee of an expired invitation", "Forbidden")

	// Nothing of that accepted anything (the webhook would have created the
	// grant within these seconds).
	time.Sleep(3 * time.Second)
	if got := p.inviteState(t, org, "gina"); got != corev1alpha1.ReasonPending {
		t.Fatalf("gina's invitation is %s after the attacks, want Pending", got)
	}
	if got := p.inviteState(t, org, "late"); got != corev1alpha1.ReasonExpired {
		t.Fatalf("the expired invitation is %s after its invitee signed in, want Expired", got)
	}
	for _, a := range append(attempts, struct{ what, token string }{"mallory", mallory}) {
		out, err := p.withToken(t, a.token, org, "", "get", "accounts")
		framework.RequireFails(t, "", out, err, a.what+" after the attacks", "Forbidden")
	}

	// gina signs in with her verified address: her first request into
	// inviteorg accepts the invitation, and within a second she reads.
	gina := p.token("gina", oidcissuer.Claims{"email": "gina@example.com", "email_verified": true})
	start = time.Now()
	var first string
	framework.Eventually(t, 60*time.Second, 100*time.Millisecond, "gina to read once she signed in", func() (bool, string) {
		out, err := p.withToken(t, gina, org, "", "get", "accounts")
		if first == "" {
			first = fmt.Sprintf("error %v: %s", err, out)
		}
		return err == nil, out
	})
	// (While the webhook makes the grant it answers her requests with
	// "retry", so the first one usually waits for it and succeeds.)
	t.Logf("gina's first request into inviteorg: %s; reading after %v", strings.TrimSpace(first), time.Since(start))
	p.waitInvite(t, org, "gina", corev1alpha1.ReasonAccepted)
	framework.RequireContains(t, p.must(t, "alice", org, "", "get", "invite", "gina", "-o", "jsonpath={.status.acceptedBy}"), "oidc:gina", "gina's Invite status")
	// Used up: another user with the same address gains nothing.
	other := p.token("gina-again", oidcissuer.Claims{"email": "gina@example.com"})
	out, err = p.withToken(t, other, org, "", "get", "accounts")
	framework.RequireFails(t, "", out, err, "a second user with gina's address", "Forbidden")

	// A pending invitation expires: its status says so and the invitee's
	// sign-in after that accepts nothing.
	soon := time.Now().Add(4 * time.Second).UTC().Format(time.RFC3339)
	p.must(t, "alice", org, inviteYAML("kate", "  email: kate@example.com\n  expiresAt: \""+soon+"\"\n"), "create", "-f", "-")
	p.waitInvite(t, org, "kate", corev1alpha1.ReasonExpired)
	kate := p.token("kate", oidcissuer.Claims{"email": "kate@example.com", "email_verified": true})
	out, err = p.withToken(t, kate, org, "", "get", "accounts")
	framework.RequireFails(t, "", out, err, "kate after her invitation expired", "Forbidden")
	time.Sleep(2 * time.Second)
	if got := p.inviteState(t, org, "kate"); got != corev1alpha1.ReasonExpired {
		t.Fatalf("kate's expired invitation is %s after she signed in, want Expired", got)
	}

	// An invitee whose first step is kubectl ws use: he enters.
	p.must(t, "alice", org, inviteYAML("jack", "  email: jack@example.com\n"), "create", "-f", "-")
	p.waitInvite(t, org, "jack", corev1alpha1.ReasonPending)
	jack := p.token("jack", oidcissuer.Claims{"email": "jack@example.com", "email_verified": true})
	tries := 0
	framework.Eventually(t, 60*time.Second, 250*time.Millisecond, "jack to enter inviteorg with kubectl ws use", func() (bool, string) {
		tries++
		out, err := p.wsWithToken(t, jack, "use", org)
		return err == nil, out
	})
	t.Logf("jack entered inviteorg with kubectl ws use at attempt %d", tries)
	p.waitInvite(t, org, "jack", corev1alpha1.ReasonAccepted)

	// GraphQL: alice invites hank, bob lists the invitations, may not
	// invite; alice deletes it.
	const gqlInvite = `mutation { core_platform_mesh_io { v1alpha1 { createInvite(object: {metadata: {name: "hank"}, spec: {user: "hank", role: "member"}}) { metadata { name } } } } }`
	if out := p.graphql(t, "alice", org, gqlInvite); !strings.Contains(out, `"name":"hank"`) || strings.Contains(out, `"errors"`) {
		t.Fatalf("alice inviting hank through GraphQL: %s", out)
	}
	p.waitInvite(t, org, "hank", corev1alpha1.ReasonAccepted)
	if out := p.graphql(t, "bob", org, `{ core_platform_mesh_io { v1alpha1 { Invites { items { metadata { name } spec { user email role } status { acceptedBy } } } } } }`); !strings.Contains(out, `"acceptedBy":"hank"`) {
		t.Errorf("bob listing the invitations through GraphQL: %s", out)
	}
	if out := p.graphql(t, "bob", org, strings.ReplaceAll(gqlInvite, "hank", "bobs-friend")); !strings.Contains(out, "orbidden") {
		t.Errorf("bob (a member) inviting through GraphQL: %s", out)
	}
	if out := p.graphql(t, "alice", org, `mutation { core_platform_mesh_io { v1alpha1 { deleteInvite(name: "hank") } } }`); !strings.Contains(out, `"deleteInvite":true`) {
		t.Errorf("alice deleting hank's invitation through GraphQL: %s", out)
	}

	// The security-operator restarted and crashing: alice still owns her
	// organization, invitations still turn into grants.
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		pid := p.component(t, "security-operator")
		if err := syscall.Kill(pid, sig); err != nil {
			t.Fatal(err)
		}
		framework.Eventually(t, 60*time.Second, 250*time.Millisecond, "the security-operator to be started again", func() (bool, string) {
			if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err == nil {
				return false, "old process still there"
			}
			return true, ""
		})
		aliceOwns(fmt.Sprintf("the security-operator got %v", sig))
		p.must(t, "alice", org, inviteYAML("ivan", "  user: ivan\n"), "apply", "-f", "-")
		p.waitInvite(t, org, "ivan", corev1alpha1.ReasonAccepted)
		p.must(t, "alice", org, "", "delete", "invite", "ivan")
	}
	aliceOwns("restarts")

	// alice removes bob: deleting his Invite revokes the grant it became.
	start = time.Now()
	p.must(t, "alice", org, "", "delete", "invite", "bob")
	revoked := latency(t, bob, start, false, "bob to be refused once his invitation is deleted")
	if out, err := p.wsRun(t, "bob", "use", org); err == nil {
		t.Fatalf("bob entered inviteorg after his invitation was deleted:\n%s", out)
	}
	aliceOwns("deleting bob's invitation")

	// Outsiders list no organization.
	for _, tok := range []string{mallory, late} {
		out, err := p.withToken(t, tok, "root:orgs", "", "get", "accounts")
		framework.RequireFails(t, "", out, err, "an outsider listing root:orgs", "Forbidden")
	}
	t.Logf("invite (kubectl create .. bob's first allowed list): %v; delete invite (kubectl delete .. bob's first refused list): %v", granted, revoked)
}
