package oidc

import (
	"fmt"
	"testing"
	"time"

	tenancyv1alpha1 "github.com/kcp-dev/sdk/apis/tenancy/v1alpha1"

	"github.com/meshplane/meshplane/sdk/testing/framework"
	"github.com/meshplane/meshplane/sdk/testing/oidcissuer"
)

// TestWorkspaceTypeIssuer: an organisation's own issuer, configured by a
// WorkspaceAuthenticationConfiguration that its WorkspaceType references,
// authenticates users in the workspaces of that type only: not in
// workspaces of other types, not in those of a type extending it, not in
// the organisation itself. The user is scoped to the cluster, system:
// groups are dropped, and the type follows changes of the configuration.
func TestWorkspaceTypeIssuer(t *testing.T) {
	s := server(t)
	org := s.CreateOrg(t, "oidc-org")
	corp, err := issuers.NewIssuer(framework.UniqueName("corp"), oidcissuer.ES256)
	if err != nil {
		t.Fatal(err)
	}
	k := s.KubectlFor(org.Path)
	wac := fmt.Sprintf(`apiVersion: tenancy.kcp.io/v1alpha1
kind: WorkspaceAuthenticationConfiguration
metadata: {name: corp}
spec:
  jwt:
  - issuer:
      url: %s
      audiences: [corp-app]
      certificateAuthority: |
%s
    claimMappings:
      username: {claim: email, prefix: "corp:"}
      groups: {claim: groups, prefix: ""}
`, corp.URL, indent(issuers.CAPEM(), "        "))
	k.RunStdin(t, wac, "apply", "--server-side", "-f", "-")
	k.RunStdin(t, fmt.Sprintf(`apiVersion: tenancy.kcp.io/v1alpha1
kind: WorkspaceType
metadata: {name: corp-team}
spec:
  extend: {with: [{name: universal, path: root}]}
  authenticationConfigurations: [{name: corp}]
---
apiVersion: tenancy.kcp.io/v1alpha1
kind: WorkspaceType
metadata: {name: corp-sub}
spec:
  extend: {with: [{name: corp-team, path: %s}]}
`, org.Path), "apply", "-f", "-")
	for _, w := range []struct{ name, typ string }{{"acme", "corp-team"}, {"acme-sub", "corp-sub"}, {"plain", "universal"}} {
		path := org.Path
		if w.typ == "universal" {
			path = "root"
		}
		s.CreateWorkspaceOfType(t, org.Path, w.name, tenancyv1alpha1.WorkspaceTypeReference{Name: tenancyv1alpha1.WorkspaceTypeName(w.typ), Path: path})
	}
	clusters := map[string]string{}
	for _, name := range []string{"acme", "acme-sub", "plain"} {
		ws := framework.WaitWorkspacePhase(t, s.RESTConfig(t, org.Path), name, "Ready", 2*time.Minute)
		clusters[name] = ws.Spec.Cluster
		// The same grant everywhere, so that 401 is about authentication.
		s.KubectlFor(org.Path+":"+name).Run(t, "create", "clusterrolebinding", "corp-admins", "--clusterrole", "cluster-admin", "--group", "admins")
	}
	s.KubectlFor(org.Path).Run(t, "create", "clusterrolebinding", "corp-admins", "--clusterrole", "cluster-admin", "--group", "admins")
	acme := org.Path + ":acme"

	tok := corp.Token(oidcissuer.Claims{"sub": "u-1", "email": "bob@acme.example", "aud": "corp-app",
		"groups": []string{"admins", "system:masters"}}, time.Hour)
	framework.Eventually(t, 30*time.Second, 200*time.Millisecond, "the corp issuer to authenticate in "+acme, func() (bool, string) {
		ok, got := unauthorized(t, s, acme, tok)
		return !ok, got
	})
	u := whoami(t, s, acme, tok)
	if u.Username != "corp:bob@acme.example" || !hasAll(u.Groups, "admins", "system:authenticated") || hasAll(u.Groups, "system:masters") {
		t.Fatalf("whoami in %s: want corp:bob@acme.example in admins and system:authenticated, not system:masters, got %+v", acme, u)
	}
	if got := u.Extra["authentication.kcp.io/scopes"]; len(got) != 1 || got[0] != "cluster:"+clusters["acme"] {
		t.Fatalf("whoami in %s: want extra authentication.kcp.io/scopes [cluster:%s], got %v", acme, clusters["acme"], u.Extra)
	}
	kubectlWithToken(s, acme, tok).Run(t, "create", "configmap", "by-bob", "-n", "default")

	for _, where := range []string{org.Path + ":acme-sub", org.Path + ":plain", org.Path, "root"} {
		requireUnauthorized(t, s, where, tok, "a token of the corp issuer")
	}
	// The global issuer still applies in the type's workspaces.
	s.KubectlFor(acme).Run(t, "create", "clusterrolebinding", "oidc-admins", "--clusterrole", "cluster-admin", "--group", "oidc:admins")
	if g := whoami(t, s, acme, global.Token(oidcissuer.Claims{"sub": "alice", "aud": audience, "groups": []string{"admins"}}, time.Hour)); g.Username != "oidc:alice" {
		t.Fatalf("global issuer in %s: want oidc:alice, got %+v", acme, g)
	}

	// Deleting the configuration ends its tokens; creating it again brings
	// them back.
	k.Run(t, "delete", "workspaceauthenticationconfiguration", "corp")
	framework.Eventually(t, 30*time.Second, 200*time.Millisecond, "the corp token to be refused in "+acme+" once its configuration is gone", func() (bool, string) {
		return unauthorized(t, s, acme, tok)
	})
	k.RunStdin(t, wac, "apply", "-f", "-")
	framework.Eventually(t, 30*time.Second, 200*time.Millisecond, "the corp token to be accepted in "+acme+" again", func() (bool, string) {
		ok, got := unauthorized(t, s, acme, tok)
		return !ok, got
	})
}

// TestWorkspaceAuthenticationConfigurationValidation: kcp's schema rules
// are enforced with a 422 naming the field.
func TestWorkspaceAuthenticationConfigurationValidation(t *testing.T) {
	s := server(t)
	_, k := s.NewCluster(t, "oidc-validation")
	_, stderr, err := k.RunStdinErr(t, `apiVersion: tenancy.kcp.io/v1alpha1
kind: WorkspaceAuthenticationConfiguration
metadata: {name: bad}
spec:
  jwt:
  - issuer: {url: ""}
    claimMappings:
      username: {claim: sub, expression: claims.sub}
`, "create", "-f", "-")
	if err == nil || !contains(stderr, "spec.jwt[0].issuer.url: Required value") || !contains(stderr, "claim and expression cannot both be specified") {
		t.Fatalf("invalid WorkspaceAuthenticationConfiguration: want 422 naming issuer.url and claimMappings.username, got err=%v stderr=%q", err, stderr)
	}
}
