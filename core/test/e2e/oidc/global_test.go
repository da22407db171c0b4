package oidc

import (
	"testing"
	"time"

	"github.com/meshplane/meshplane/sdk/testing/framework"
	"github.com/meshplane/meshplane/sdk/testing/oidcissuer"
)

// TestGlobalIssuerUser: a token of the --authentication-config issuer
// authenticates in any workspace, with the username and groups its claim
// mappings give (prefix "oidc:"); RBAC then decides as for any user.
func TestGlobalIssuerUser(t *testing.T) {
	s := server(t)
	ws := s.CreateOrg(t, "oidc-global")
	s.KubectlFor(ws.Path).Run(t, "create", "clusterrolebinding", "devs-admin", "--clusterrole", "cluster-admin", "--group", "oidc:devs")
	tok := global.Token(oidcissuer.Claims{"sub": "alice", "aud": audience, "groups": []string{"devs", "ops"}}, time.Hour)

	u := whoami(t, s, ws.Path, tok)
	if u.Username != "oidc:alice" || !hasAll(u.Groups, "oidc:devs", "oidc:ops", "system:authenticated") {
		t.Fatalf("kubectl auth whoami: want user oidc:alice in groups oidc:devs, oidc:ops, system:authenticated, got %+v", u)
	}
	k := kubectlWithToken(s, ws.Path, tok)
	k.Run(t, "create", "configmap", "by-alice", "-n", "default", "--from-literal", "k=v")
	if cm := k.GetConfigMap(t, "default", "by-alice"); cm.Data["k"] != "v" {
		t.Fatalf("configmap created by oidc:alice: want data k=v, got %v", cm.Data)
	}

	// Authenticated in another workspace too, where RBAC grants nothing
	// (not even access to the workspace): 403 naming the user, not 401.
	other := s.CreateOrg(t, "oidc-global-other")
	r := s.RequestURL(t, tok, "GET", s.ClusterURL(other.Path)+"/api/v1/namespaces/default/configmaps", "", nil)
	if r.Err != nil || r.Code != 403 || !contains(string(r.Body), `User \"oidc:alice\" cannot list`) {
		t.Fatalf("oidc:alice in %s without a binding: want 403 naming the user, got %s", other.Path, r)
	}
}

// TestRefusedTokens: tokens that must not authenticate get 401.
func TestRefusedTokens(t *testing.T) {
	s := server(t)
	ws := s.CreateOrg(t, "oidc-refused")
	stranger, err := issuers.NewIssuer(framework.UniqueName("stranger"), oidcissuer.RS256)
	if err != nil {
		t.Fatal(err)
	}
	good := oidcissuer.Claims{"sub": "mallory", "aud": audience}
	with := func(k string, v any) oidcissuer.Claims {
		c := oidcissuer.Claims{}
		for a, b := range good {
			c[a] = b
		}
		c[k] = v
		return c
	}
	for _, tc := range []struct{ name, token string }{
		{"expired token", global.Token(good, -time.Minute)},
		{"wrong audience", global.Token(with("aud", "someone-else"), time.Hour)},
		{"bad signature", global.ForgedToken(good, time.Hour)},
		{"claim validation rule (CEL) fails", global.Token(with("blocked", true), time.Hour)},
		{"unknown issuer", stranger.Token(good, time.Hour)},
		{"not a JWT", "not-a-token"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			requireUnauthorized(t, s, ws.Path, tc.token, tc.name)
		})
	}
	// The same claims, well signed and valid: accepted (403 without RBAC).
	if ok, got := unauthorized(t, s, ws.Path, global.Token(good, time.Hour)); ok {
		t.Fatalf("a valid token of the global issuer was refused: %s", got)
	}
}
