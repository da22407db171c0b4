package jwt

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apiserver/pkg/authentication/authenticator"

	"github.com/meshplane/meshplane/sdk/testing/latency"
	"github.com/meshplane/meshplane/sdk/testing/oidcissuer"
)

func startIssuer(t testing.TB, names ...string) (*oidcissuer.Server, []*oidcissuer.Issuer) {
	t.Helper()
	srv, err := oidcissuer.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	var out []*oidcissuer.Issuer
	for i, n := range names {
		alg := oidcissuer.RS256
		if i%2 == 1 {
			alg = oidcissuer.ES256
		}
		iss, err := srv.NewIssuer(n, alg)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, iss)
	}
	return srv, out
}

// configYAML trusts each issuer with audience "api", usernames from "sub"
// (prefix "oidc:"), groups from "groups" (prefix "g:"), uid from "uid" if set,
// an extra from CEL, and the given rules.
func configYAML(srv *oidcissuer.Server, rules string, iss ...*oidcissuer.Issuer) string {
	out := "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n"
	ca := "      " + strings.ReplaceAll(strings.TrimSpace(srv.CAPEM()), "\n", "\n      ")
	for _, i := range iss {
		out += fmt.Sprintf(`- issuer:
    url: %s
    audiences: [api]
    certificateAuthority: |
%s
  claimMappings:
    username: {claim: sub, prefix: "oidc:"}
    groups: {claim: groups, prefix: "g:"}
    uid: {expression: "has(claims.uid) ? claims.uid : ''"}
    extra:
    - key: example.com/tenant
      valueExpression: "has(claims.tenant) ? claims.tenant : 'none'"
%s`, i.URL, ca, rules)
	}
	return out
}

func waitHealthy(t testing.TB, a interface{ Healthy() error }) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for a.Healthy() != nil {
		if time.Now().After(deadline) {
			t.Fatalf("authenticator not healthy: %v", a.Healthy())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func newAuthenticator(t testing.TB, yaml string, ttl time.Duration) *Authenticator {
	t.Helper()
	c, err := Parse([]byte(yaml), nil)
	if err != nil {
		t.Fatalf("Parse: %v\n%s", err, yaml)
	}
	a, err := New(context.Background(), c.JWT, Options{CacheTTL: ttl})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Stop)
	waitHealthy(t, a)
	return a
}

func TestParse(t *testing.T) {
	srv, iss := startIssuer(t, "a")
	good := configYAML(srv, "", iss...)
	for _, tc := range []struct {
		name, yaml, wantErr string
		disallowed          []string
	}{
		{name: "v1", yaml: good},
		{name: "v1beta1", yaml: strings.Replace(good, "apiserver.config.k8s.io/v1", "apiserver.config.k8s.io/v1beta1", 1)},
		{name: "v1alpha1", yaml: strings.Replace(good, "apiserver.config.k8s.io/v1", "apiserver.config.k8s.io/v1alpha1", 1)},
		{name: "unknown field", yaml: good + "unknown: 1\n", wantErr: "unknown field"},
		{name: "wrong kind", yaml: "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthorizationConfiguration\n", wantErr: "AuthenticationConfiguration"},
		{name: "anonymous", yaml: good + "anonymous: {enabled: true}\n", wantErr: "anonymous: not supported"},
		{name: "http issuer", yaml: strings.Replace(good, "https://", "http://", 1), wantErr: "URL scheme must be https"},
		{name: "service-account issuer", yaml: good, disallowed: []string{iss[0].URL}, wantErr: "disallowed"},
		{name: "CEL that does not compile", yaml: configYAML(srv, "  claimValidationRules:\n  - {expression: 'claims.', message: m}\n", iss...), wantErr: "compilation failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.yaml), tc.disallowed)
			if tc.wantErr == "" && err != nil {
				t.Fatalf("want no error, got %v", err)
			}
			if tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("want an error containing %q, got %v", tc.wantErr, err)
			}
		})
	}
}

func TestAuthenticate(t *testing.T) {
	srv, iss := startIssuer(t, "rsa", "ec")
	rules := "  userValidationRules:\n  - {expression: \"!user.username.startsWith('oidc:system:')\", message: no system users}\n"
	a := newAuthenticator(t, configYAML(srv, rules, iss...), 0)
	ctx := context.Background()
	for _, i := range iss {
		resp, ok, err := a.AuthenticateToken(ctx, i.Token(oidcissuer.Claims{"sub": "alice", "aud": "api", "uid": "u-1",
			"groups": []string{"dev"}, "tenant": "acme"}, time.Hour))
		if !ok || err != nil {
			t.Fatalf("%s: want authenticated, got ok=%v err=%v", i.URL, ok, err)
		}
		u := resp.User
		if u.GetName() != "oidc:alice" || u.GetUID() != "u-1" || len(u.GetGroups()) != 1 || u.GetGroups()[0] != "g:dev" ||
			strings.Join(u.GetExtra()["example.com/tenant"], ",") != "acme" {
			t.Errorf("%s: user = %+v, want oidc:alice, uid u-1, groups [g:dev], extra tenant acme", i.URL, u)
		}
	}
	for _, tc := range []struct{ name, token, wantErr string }{
		{"expired", iss[0].Token(oidcissuer.Claims{"sub": "a", "aud": "api"}, -time.Minute), "expired"},
		{"audience", iss[0].Token(oidcissuer.Claims{"sub": "a", "aud": "other"}, time.Hour), "audience"},
		{"signature", iss[1].ForgedToken(oidcissuer.Claims{"sub": "a", "aud": "api"}, time.Hour), "signature"},
		{"user validation rule", iss[0].Token(oidcissuer.Claims{"sub": "system:admin", "aud": "api"}, time.Hour), "no system users"},
	} {
		_, ok, err := a.AuthenticateToken(ctx, tc.token)
		if ok || err == nil || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("%s: want refused with an error containing %q, got ok=%v err=%v", tc.name, tc.wantErr, ok, err)
		}
	}
	// Another issuer's token is not this authenticator's: not an error.
	_, other := startIssuer(t, "other")
	if _, ok, err := a.AuthenticateToken(ctx, other[0].Token(oidcissuer.Claims{"sub": "a", "aud": "api"}, time.Hour)); ok || err != nil {
		t.Errorf("unknown issuer: want not authenticated and no error, got ok=%v err=%v", ok, err)
	}
}

func TestFileReload(t *testing.T) {
	old := ReloadInterval
	ReloadInterval = 50 * time.Millisecond
	t.Cleanup(func() { ReloadInterval = old })
	srv, iss := startIssuer(t, "first", "second")
	file := filepath.Join(t.TempDir(), "auth.yaml")
	write := func(s string) {
		if err := os.WriteFile(file, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(configYAML(srv, "", iss[0]))
	f, err := NewFile(file, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	second := iss[1].Token(oidcissuer.Claims{"sub": "bob", "aud": "api"}, time.Hour)
	if _, ok, _ := f.AuthenticateToken(ctx, second); ok {
		t.Fatal("before Start: want nobody authenticated")
	}
	if err := f.Start(ctx); err != nil {
		t.Fatal(err)
	}
	authenticated := func(token string) bool {
		_, ok, _ := f.AuthenticateToken(ctx, token)
		return ok
	}
	eventually := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s", what)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	first := iss[0].Token(oidcissuer.Claims{"sub": "alice", "aud": "api"}, time.Hour)
	eventually("the first issuer to be ready", func() bool { return authenticated(first) })
	if authenticated(second) {
		t.Fatal("the second issuer is not configured yet")
	}
	write(configYAML(srv, "", iss...))
	eventually("the second issuer after the file changed", func() bool { return authenticated(second) })
	write("not: [valid")
	time.Sleep(10 * ReloadInterval) // several reloads; nothing to wait for that would show
	if !authenticated(first) || !authenticated(second) {
		t.Fatal("an invalid file must leave the running configuration in place")
	}
}

// BenchmarkWarmJWT is the authentication of a token seen before, through
// kube's token cache (10s): every request of a client but the first few.
func BenchmarkWarmJWT(b *testing.B) { benchmarkJWT(b, CacheTTL) }

// BenchmarkVerifyJWT verifies the token every time (RS256 signature,
// claim mappings with CEL): a token's first request.
func BenchmarkVerifyJWT(b *testing.B) { benchmarkJWT(b, 0) }

func benchmarkJWT(b *testing.B, ttl time.Duration) {
	srv, iss := startIssuer(b, "bench")
	a := newAuthenticator(b, configYAML(srv, "", iss...), ttl)
	token := iss[0].Token(oidcissuer.Claims{"sub": "alice", "aud": "api", "groups": []string{"dev"}}, time.Hour)
	ctx := authenticator.WithAudiences(context.Background(), authenticator.Audiences{"api"})
	if _, ok, err := a.AuthenticateToken(ctx, token); !ok || err != nil {
		b.Fatalf("ok=%v err=%v", ok, err)
	}
	var rec latency.Recorder
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		_, ok, _ := a.AuthenticateToken(ctx, token)
		rec.Add(time.Since(start))
		if !ok {
			b.Fatal("not authenticated")
		}
	}
	rec.Report(b)
}
