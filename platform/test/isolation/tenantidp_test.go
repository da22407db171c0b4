package isolation

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/meshplane/meshplane/sdk/testing/oidcissuer"
)

// tenantIssuerProbes: bob runs an OIDC issuer of his own and trusts it in
// bobcorp the kcp way (a WorkspaceAuthenticationConfiguration named by a
// WorkspaceType, and a workspace of that type). It mints tokens for
// "alice" in system:masters: they may count in his typed workspace only
// (as alice, without the group), nowhere else.
func (p *platform) tenantIssuerProbes(t *testing.T, ctx context.Context, tn *tenants) []probe {
	t.Helper()
	iss, err := p.idp.NewIssuer("bobs-idp", oidcissuer.ES256)
	if err != nil {
		t.Fatal(err)
	}
	base := p.proxy + "/clusters/" + tn.bob.path
	idp := base + ":idp"
	token := tn.bob.ownerToken
	p.must(t, ctx, "bob's WorkspaceAuthenticationConfiguration", call{method: http.MethodPost, url: base + "/apis/tenancy.kcp.io/v1alpha1/workspaceauthenticationconfigurations",
		token: token, body: map[string]any{"apiVersion": "tenancy.kcp.io/v1alpha1", "kind": "WorkspaceAuthenticationConfiguration", "metadata": map[string]any{"name": "bobs-idp"},
			"spec": map[string]any{"jwt": []any{map[string]any{
				"issuer": map[string]any{"url": iss.URL, "audiences": []any{"bobs"}, "certificateAuthority": p.idp.CAPEM()},
				"claimMappings": map[string]any{"username": map[string]any{"claim": "sub", "prefix": ""},
					"groups": map[string]any{"claim": "groups", "prefix": ""}},
			}}}}})
	p.must(t, ctx, "bob's WorkspaceType trusting it", call{method: http.MethodPost, url: base + "/apis/tenancy.kcp.io/v1alpha1/workspacetypes", token: token,
		body: map[string]any{"apiVersion": "tenancy.kcp.io/v1alpha1", "kind": "WorkspaceType", "metadata": map[string]any{"name": "bobtype"},
			"spec": map[string]any{"authenticationConfigurations": []any{map[string]any{"name": "bobs-idp"}}}}})
	// On the shard holding the type (a shard's authenticators know the
	// types of its own logical clusters only).
	p.setUnschedulable(t, ctx, otherShard(tn.bob.shard), true)
	defer p.setUnschedulable(t, ctx, otherShard(tn.bob.shard), false)
	p.must(t, ctx, "bob's workspace of that type", call{method: http.MethodPost, url: base + "/apis/tenancy.kcp.io/v1alpha1/workspaces", token: token,
		body: map[string]any{"apiVersion": "tenancy.kcp.io/v1alpha1", "kind": "Workspace", "metadata": map[string]any{"name": "idp"},
			"spec": map[string]any{"type": map[string]any{"name": "bobtype", "path": tn.bob.path}}}})
	eventually(t, 60*time.Second, "bob's workspace idp scheduled", func() (bool, string) {
		a := p.do(ctx, call{method: http.MethodGet, url: base + "/apis/tenancy.kcp.io/v1alpha1/workspaces/idp", token: token})
		var w struct {
			Status struct{ Phase string }
		}
		_ = a.decode(&w)
		return w.Status.Phase == "Ready", a.String()
	})
	// bob makes "alice" admin of his typed workspace (his to give).
	eventually(t, 60*time.Second, "bob binding alice in root:orgs:bobcorp:idp", func() (bool, string) {
		a := p.do(ctx, call{method: http.MethodPost, url: idp + "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", token: token,
			body: map[string]any{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": map[string]any{"name": "fake-alice"},
				"roleRef":  map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-admin"},
				"subjects": []any{map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "alice"}}}})
		return a.ok() || a.code == http.StatusConflict, a.String()
	})
	fake := iss.Token(oidcissuer.Claims{"sub": "alice", "aud": "bobs", "groups": []string{"system:masters", "admins"}}, time.Hour)
	ssr := map[string]any{"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}
	// Control: in his typed workspace the token is alice, without the
	// system group.
	eventually(t, 60*time.Second, "bob's issuer trusted in root:orgs:bobcorp:idp", func() (bool, string) {
		a := p.do(ctx, call{method: http.MethodPost, url: idp + "/apis/authentication.k8s.io/v1/selfsubjectreviews", token: fake, body: ssr})
		return a.ok() && strings.Contains(string(a.body), `"username":"alice"`), a.String()
	})
	var probes []probe
	who := "bob's own issuer's token for alice"
	add := func(pr probe) {
		pr.area = "tenant issuer"
		probes = append(probes, pr)
	}
	add(p.noVictimData("", who, fake, "who am I in his typed workspace", call{method: http.MethodPost, url: idp + "/apis/authentication.k8s.io/v1/selfsubjectreviews", body: ssr},
		[]string{"system:masters"}))
	for _, w := range []ws{tn.acme.orgWS(), tn.acme.accountWS(), tn.cobalt.orgWS(), tn.cobalt.accountWS(), {path: "root:orgs", cluster: tn.orgsCluster, shard: "root"}, tn.bob.orgWS()} {
		for _, addr := range p.addressings(w)[:4] {
			for _, o := range []op{readOps[1], readOps[5], readOps[8], writeOps("alice")[3],
				{"whoami", http.MethodPost, "/apis/authentication.k8s.io/v1/selfsubjectreviews", ssr}} {
				add(p.refused("", who, fake, o.what+" in "+w.path+" "+addr.how, call{method: o.method, url: addr.base + o.path, body: o.body}))
			}
		}
	}
	add(p.refused("", who, fake, "found an org as alice", call{method: http.MethodPost, url: p.proxy + "/clusters/root:orgs/apis/core.platform-mesh.io/v1alpha1/accounts" + dryRun,
		body: map[string]any{"apiVersion": "core.platform-mesh.io/v1alpha1", "kind": "Account", "metadata": map[string]any{"name": "fakeorg"}, "spec": map[string]any{"type": "org"}}}))
	add(p.graphQLProbe(attacker{who, fake}, "GraphQL: list secrets in acme", tn.acme.path, `{ v1 { Secrets(namespace: "apps") { items { metadata { name } data } } } }`, tn.acme.markers(), true))
	return probes
}
