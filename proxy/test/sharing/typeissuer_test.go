package sharing

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"

	"github.com/meshplane/meshplane/sdk/testing/framework"
	"github.com/meshplane/meshplane/sdk/testing/oidcissuer"
)

// testTypeIssuer: a WorkspaceType on the root shard whose
// WorkspaceAuthenticationConfiguration names an OIDC issuer; a workspace
// of that type on shard b accepts that issuer's tokens as one on root
// does (shard b reads the type and its configuration from its replica of
// root), and a workspace of another type on b still refuses them.
func testTypeIssuer(t *testing.T, sh *framework.Shards) {
	issuers, err := oidcissuer.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(issuers.Close)
	corp, err := issuers.NewIssuer(framework.UniqueName("corp"), oidcissuer.ES256)
	if err != nil {
		t.Fatal(err)
	}
	ps := sh.Via
	org := framework.CreatePinnedWorkspace(t, ps, "root", framework.UniqueName("issuer"), "root")
	k := ps.KubectlFor(org.Path)
	k.RunStdin(t, fmt.Sprintf(`apiVersion: tenancy.kcp.io/v1alpha1
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
---
apiVersion: tenancy.kcp.io/v1alpha1
kind: WorkspaceType
metadata: {name: corp-team}
spec:
  extend: {with: [{name: universal, path: root}]}
  authenticationConfigurations: [{name: corp}]
`, corp.URL, "        "+strings.ReplaceAll(strings.TrimSpace(issuers.CAPEM()), "\n", "\n        ")), "apply", "-f", "-")
	k.RunStdin(t, framework.PinnedWorkspace("acme", "b", org.Path+":corp-team"), "apply", "-f", "-")
	k.RunStdin(t, framework.PinnedWorkspace("plain", "b", ""), "apply", "-f", "-")
	for _, name := range []string{"acme", "plain"} {
		if _, shard := framework.WaitWorkspaceReady(t, k, name); shard != "b" {
			t.Fatalf("workspace %s landed on shard %q, want b", name, shard)
		}
		// The same grant in both, so that 401 is about authentication.
		ps.KubectlFor(org.Path+":"+name).Run(t, "create", "clusterrolebinding", "corp-admins", "--clusterrole", "cluster-admin", "--group", "admins")
	}

	tok := corp.Token(oidcissuer.Claims{"sub": "u-1", "email": "bob@acme.example", "aud": "corp-app", "groups": []string{"admins"}}, time.Hour)
	withToken := func(path string) *framework.Kubectl {
		return &framework.Kubectl{Kubeconfig: ps.Kubeconfig, GlobalArgs: []string{"--context", "shard-base", "--server", ps.ClusterURL(path), "--token", tok}}
	}
	acme := org.Path + ":acme"
	framework.Eventually(t, 30*time.Second, 250*time.Millisecond, "the corp issuer to authenticate in "+acme+" on shard b", func() (bool, string) {
		out, errOut, err := withToken(acme).RunErr(t, "get", "configmaps", "-n", "default")
		return err == nil, out + errOut
	})
	var review authenticationv1.SelfSubjectReview
	if err := json.Unmarshal([]byte(withToken(acme).Run(t, "auth", "whoami", "-o", "json")), &review); err != nil {
		t.Fatal(err)
	}
	framework.RequireEqual(t, review.Status.UserInfo.Username, "corp:bob@acme.example", "user of the corp token in "+acme)

	out, errOut, err := withToken(org.Path+":plain").RunErr(t, "get", "configmaps", "-n", "default")
	framework.RequireFails(t, out, errOut, err, "a corp token in a workspace of another type on shard b", "You must be logged in to the server")
}
