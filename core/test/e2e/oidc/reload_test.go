package oidc

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/meshplane/meshplane/sdk/testing/framework"
	"github.com/meshplane/meshplane/sdk/testing/oidcissuer"
)

// TestReload: a changed --authentication-config file is picked up while
// the server runs; an invalid one is refused and the running
// configuration stays.
func TestReload(t *testing.T) {
	s := server(t)
	ws := s.CreateOrg(t, "oidc-reload")
	tok := late.Token(oidcissuer.Claims{"sub": "carol", "aud": audience}, time.Hour)
	requireUnauthorized(t, s, ws.Path, tok, "a token of an issuer not (yet) configured")

	t.Cleanup(func() { _ = os.WriteFile(authConfigFile, []byte(authConfig(global)), 0o600) })
	if err := os.WriteFile(authConfigFile, []byte(authConfig(global, late)), 0o600); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, time.Minute, 250*time.Millisecond, "the added issuer to be accepted", func() (bool, string) {
		ok, got := unauthorized(t, s, ws.Path, tok)
		return !ok, got
	})

	from := int64(len(s.LogTail(0, 0)))
	if err := os.WriteFile(authConfigFile, []byte("apiVersion: apiserver.config.k8s.io/v1beta1\nkind: AuthenticationConfiguration\njwt: [{issuer: {url: http://insecure}}]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, time.Minute, 250*time.Millisecond, "the server to log that it keeps the running configuration", func() (bool, string) {
		return strings.Contains(s.LogTail(from, 0), "Invalid authentication configuration; keeping the running one"), ""
	})
	if ok, got := unauthorized(t, s, ws.Path, tok); ok {
		t.Fatalf("after an invalid file the running configuration must stay: %s", got)
	}
}
