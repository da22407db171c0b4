package serviceaccount

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	apiserverserviceaccount "k8s.io/apiserver/pkg/authentication/serviceaccount"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/utils/lru"
)

// ClusterExtra is the user extra that names a service account's logical
// cluster, as kcp sets it.
const ClusterExtra = "authentication.kubernetes.io/cluster-name"

// CacheSize bounds the verified tokens kept in memory.
const CacheSize = 4096

// Lookup finds what a token depends on. Both return nil, nil when the
// object does not exist.
type Lookup interface {
	ServiceAccount(ctx context.Context, cluster, namespace, name string) (*corev1.ServiceAccount, error)
	Secret(ctx context.Context, cluster, namespace, name string) (*corev1.Secret, error)
}

// Authenticator authenticates service-account tokens. A token's signature
// is verified once and the result cached (bounded); every request still
// checks expiry, that the token's cluster is the request's, and that the
// ServiceAccount (and Secret) still exist with the token's UIDs.
type Authenticator struct {
	keys      *Keys
	issuers   map[string]bool
	audiences []string
	// allowed reports whether a token of cluster may authenticate the
	// request of ctx.
	allowed func(ctx context.Context, cluster string) bool
	lookup  Lookup
	cache   *lru.Cache
	now     func() time.Time
}

// NewAuthenticator accepts tokens signed by keys, issued by one of issuers
// (legacy tokens always) for one of the issuer's API audiences, of a
// cluster allowed for the request, whose ServiceAccount lookup finds.
func NewAuthenticator(keys *Keys, issuers []string, audiences []string, allowed func(ctx context.Context, cluster string) bool, lookup Lookup) *Authenticator {
	a := &Authenticator{keys: keys, issuers: map[string]bool{LegacyIssuer: true}, audiences: audiences, allowed: allowed,
		lookup: lookup, cache: lru.New(CacheSize), now: time.Now}
	for _, iss := range issuers {
		a.issuers[iss] = true
	}
	if len(a.audiences) == 0 && len(issuers) > 0 {
		a.audiences = []string{issuers[0]}
	}
	return a
}

// verified is what a verified token says, cached by the token's hash.
type verified struct {
	subject   Subject
	audiences []string
	notBefore time.Time
	expiry    time.Time // zero: never (legacy tokens)
	user      *user.DefaultInfo
}

var errInvalid = errors.New("invalid service account token")

// AuthenticateToken implements authenticator.Token.
func (a *Authenticator) AuthenticateToken(ctx context.Context, token string) (*authenticator.Response, bool, error) {
	if strings.Count(token, ".") != 2 {
		return nil, false, nil
	}
	key := sha256.Sum256([]byte(token))
	var v *verified
	if cached, ok := a.cache.Get(key); ok {
		v = cached.(*verified)
	} else {
		var err error
		v, err = a.verify(token)
		if v == nil || err != nil {
			return nil, false, err
		}
		a.cache.Add(key, v)
	}
	now := a.now()
	if (!v.expiry.IsZero() && !now.Before(v.expiry)) || now.Before(v.notBefore.Add(-time.Minute)) {
		return nil, false, fmt.Errorf("%w: expired or not yet valid", errInvalid)
	}
	auds, err := a.audiencesFor(ctx, v)
	if err != nil {
		return nil, false, err
	}
	s := v.subject
	if !a.allowed(ctx, s.Cluster) {
		// A token of another cluster: not ours to accept here.
		return nil, false, nil
	}
	if err := a.checkObjects(ctx, s, token); err != nil {
		return nil, false, err
	}
	return &authenticator.Response{User: v.user, Audiences: auds}, true, nil
}

// audiencesFor returns the token's audiences among those the request
// targets (a TokenReview's spec.audiences) or else the API audiences, as
// kube-apiserver: a legacy token has the API audiences. None in common is
// an invalid token.
func (a *Authenticator) audiencesFor(ctx context.Context, v *verified) (authenticator.Audiences, error) {
	target, ok := authenticator.AudiencesFrom(ctx)
	if !ok {
		target = a.audiences
	}
	token := authenticator.Audiences(v.audiences)
	if v.subject.Legacy {
		token = a.audiences
	}
	auds := token.Intersect(target)
	if len(auds) == 0 {
		return nil, fmt.Errorf("%w: audience %v is not one of %v", errInvalid, []string(token), []string(target))
	}
	return auds, nil
}

// checkObjects checks that the ServiceAccount and the token's Secret
// still exist as they were when the token was minted.
func (a *Authenticator) checkObjects(ctx context.Context, s Subject, token string) error {
	sa, err := a.lookup.ServiceAccount(ctx, s.Cluster, s.Namespace, s.Name)
	if err != nil {
		return err
	}
	if sa == nil || string(sa.UID) != s.UID || sa.DeletionTimestamp != nil {
		return fmt.Errorf("%w: service account %s/%s no longer exists", errInvalid, s.Namespace, s.Name)
	}
	if s.SecretName == "" {
		return nil
	}
	secret, err := a.lookup.Secret(ctx, s.Cluster, s.Namespace, s.SecretName)
	if err != nil {
		return err
	}
	if secret == nil || secret.DeletionTimestamp != nil || (s.SecretUID != "" && string(secret.UID) != s.SecretUID) {
		return fmt.Errorf("%w: secret %s/%s no longer exists", errInvalid, s.Namespace, s.SecretName)
	}
	if s.Legacy && subtle.ConstantTimeCompare(secret.Data[corev1.ServiceAccountTokenKey], []byte(token)) != 1 {
		return fmt.Errorf("%w: token does not match secret %s/%s", errInvalid, s.Namespace, s.SecretName)
	}
	return nil
}

// verify checks a token's signature, issuer and audience. A JWT of
// another issuer is no error: some other authenticator may know it.
func (a *Authenticator) verify(token string) (*verified, error) {
	c := &claims{}
	_, err := jwt.ParseWithClaims(token, c, a.keys.keyFunc, jwt.WithValidMethods([]string{"RS256", "ES256"}), jwt.WithoutClaimsValidation())
	if !a.issuers[c.Issuer] {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errInvalid, err)
	}
	s, ok := c.subject()
	if !ok {
		return nil, fmt.Errorf("%w: incomplete claims", errInvalid)
	}
	v := &verified{subject: s}
	if !s.Legacy {
		// Checked per request against the audiences it asks for (see
		// audiencesFor).
		v.audiences = c.Audience
		if c.ExpiresAt == nil {
			return nil, fmt.Errorf("%w: no expiry", errInvalid)
		}
		v.expiry = c.ExpiresAt.Time
	}
	if c.NotBefore != nil {
		v.notBefore = c.NotBefore.Time
	}
	// Groups with len == cap, so an append downstream never writes into
	// the slice shared by every request of this token.
	groups := append(apiserverserviceaccount.MakeGroupNames(s.Namespace), user.AllAuthenticated)
	v.user = &user.DefaultInfo{
		Name:   apiserverserviceaccount.MakeUsername(s.Namespace, s.Name),
		UID:    s.UID,
		Groups: groups[:len(groups):len(groups)],
		Extra:  map[string][]string{ClusterExtra: {s.Cluster}},
	}
	return v, nil
}
