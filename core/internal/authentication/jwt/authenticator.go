package jwt

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apiserver/pkg/apis/apiserver"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	tokencache "k8s.io/apiserver/pkg/authentication/token/cache"
	tokenunion "k8s.io/apiserver/pkg/authentication/token/union"
	"k8s.io/apiserver/pkg/server/dynamiccertificates"
	"k8s.io/apiserver/plugin/pkg/authenticator/token/oidc"
)

// CacheTTL is how long a successful authentication is remembered, as
// kube-apiserver's token cache does (--token-auth-cache-ttl... its default
// success TTL is 10s). A token that expires sooner is not cached past its
// expiry: the JWT authenticator reports the expiry to the cache.
const CacheTTL = 10 * time.Second

// Options of an Authenticator.
type Options struct {
	// DisallowedIssuers may not be used by any JWT authenticator (the
	// service-account issuers).
	DisallowedIssuers []string
	// CacheTTL remembers successful authentications; 0 disables the cache.
	CacheTTL time.Duration
}

// Authenticator is one JWT authenticator per issuer, tried in order. Each
// fetches its issuer's discovery document and keys in the background
// (retrying every 10s until it succeeds); until then its tokens are
// refused and Healthy reports why.
type Authenticator struct {
	token  authenticator.Token
	checks []oidc.AuthenticatorTokenWithHealthCheck
	cancel context.CancelFunc
}

// New builds the authenticators of jwts; they run until ctx ends or Stop.
func New(ctx context.Context, jwts []apiserver.JWTAuthenticator, opts Options) (*Authenticator, error) {
	ctx, cancel := context.WithCancel(ctx)
	a := &Authenticator{cancel: cancel}
	tokens := make([]authenticator.Token, 0, len(jwts))
	for i, j := range jwts {
		var ca oidc.CAContentProvider
		if j.Issuer.CertificateAuthority != "" {
			p, err := dynamiccertificates.NewStaticCAContent("oidc-authenticator", []byte(j.Issuer.CertificateAuthority))
			if err != nil {
				cancel()
				return nil, fmt.Errorf("jwt[%d].issuer.certificateAuthority: %w", i, err)
			}
			ca = p
		}
		t, err := oidc.New(ctx, oidc.Options{
			JWTAuthenticator:     j,
			CAContentProvider:    ca,
			Compiler:             compiler(),
			SupportedSigningAlgs: oidc.AllValidSigningAlgorithms(),
			DisallowedIssuers:    opts.DisallowedIssuers,
		})
		if err != nil {
			cancel()
			return nil, fmt.Errorf("jwt[%d] (issuer %s): %w", i, j.Issuer.URL, err)
		}
		tokens = append(tokens, t)
		a.checks = append(a.checks, t)
	}
	a.token = tokenunion.New(tokens...)
	if opts.CacheTTL > 0 {
		a.token = tokencache.New(a.token, true, opts.CacheTTL, 0)
	}
	return a, nil
}

// AuthenticateToken implements authenticator.Token.
func (a *Authenticator) AuthenticateToken(ctx context.Context, token string) (*authenticator.Response, bool, error) {
	return a.token.AuthenticateToken(ctx, token)
}

// Healthy is nil once every issuer's keys are known.
func (a *Authenticator) Healthy() error {
	var errs []error
	for _, c := range a.checks {
		if err := c.HealthCheck(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Stop ends the background work; the Authenticator must not be used after.
func (a *Authenticator) Stop() { a.cancel() }
