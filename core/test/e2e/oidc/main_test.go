// Package oidc tests OIDC/JWT users against a real core and a real issuer
// the tests start (discovery and JWKS over TLS on 127.0.0.1, signed JWTs):
// the global issuers of --authentication-config and kcp's per-workspace-type
// WorkspaceAuthenticationConfigurations, with kubectl and a bearer JWT.
package oidc

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/meshplane/meshplane/sdk/testing/framework"
	"github.com/meshplane/meshplane/sdk/testing/oidcissuer"
)

// Audience the global issuer's tokens must carry.
const audience = "meshplane"

var (
	issuers *oidcissuer.Server
	// global is the issuer of --authentication-config (RS256); late is
	// added to the file by TestReload.
	global, late *oidcissuer.Issuer
	// authConfigFile is the --authentication-config file.
	authConfigFile string
)

// TestMain starts the issuers, writes the authentication configuration and
// shares one server, started with it, between the tests.
func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	var err error
	if issuers, err = oidcissuer.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer issuers.Close()
	if global, err = issuers.NewIssuer("global", oidcissuer.RS256); err == nil {
		late, err = issuers.NewIssuer("late", oidcissuer.ES256)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	dir, err := os.MkdirTemp("", "meshplane-oidc-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	authConfigFile = filepath.Join(dir, "authentication.yaml")
	if err := os.WriteFile(authConfigFile, []byte(authConfig(global)), 0o600); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return framework.RunMain(m, framework.WithExtraArgs("--authentication-config", authConfigFile))
}

// authConfig is an AuthenticationConfiguration trusting the given issuers:
// usernames from "sub" and groups from "groups", both prefixed "oidc:",
// and a CEL claim rule refusing tokens with a "blocked" claim.
func authConfig(iss ...*oidcissuer.Issuer) string {
	out := "apiVersion: apiserver.config.k8s.io/v1beta1\nkind: AuthenticationConfiguration\njwt:\n"
	for _, i := range iss {
		out += fmt.Sprintf(`- issuer:
    url: %s
    audiences: [%s]
    certificateAuthority: |
%s
  claimMappings:
    username: {claim: sub, prefix: "oidc:"}
    groups: {claim: groups, prefix: "oidc:"}
  claimValidationRules:
  - expression: "!has(claims.blocked)"
    message: blocked users are refused
`, i.URL, audience, indent(issuers.CAPEM(), "      "))
	}
	return out
}

func indent(s, by string) string {
	return by + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n"+by)
}

func server(t testing.TB) *framework.Server {
	t.Helper()
	framework.SkipIfExternal(t, "the server must be started with --authentication-config naming the test's issuers")
	return framework.SharedServer(t)
}
