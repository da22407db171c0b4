package serviceaccount

import (
	"fmt"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"k8s.io/apimachinery/pkg/util/uuid"
	apiserverserviceaccount "k8s.io/apiserver/pkg/authentication/serviceaccount"
)

// Token lifetimes a TokenRequest may ask for, as in kube-apiserver.
const (
	DefaultExpiration = time.Hour
	MinExpiration     = 10 * time.Minute
	MaxExpiration     = (1 << 32) * time.Second
)

// Issuer mints tokens.
type Issuer struct {
	keys *Keys
	// issuer is the "iss" of bound tokens (the first --service-account-issuer).
	issuer string
	// audiences are the API audiences: a TokenRequest without audiences
	// gets these, and the authenticator accepts bound tokens only for one
	// of them.
	audiences []string
}

// NewIssuer returns an issuer signing with keys as issuer; the API
// audiences default to the issuer, as in kube-apiserver.
func NewIssuer(keys *Keys, issuer string, audiences []string) *Issuer {
	if len(audiences) == 0 {
		audiences = []string{issuer}
	}
	return &Issuer{keys: keys, issuer: issuer, audiences: audiences}
}

// APIAudiences are the audiences the server accepts.
func (i *Issuer) APIAudiences() []string { return append([]string(nil), i.audiences...) }

// Bound mints a token of s for audiences (the API audiences when empty),
// valid from now for expiration.
func (i *Issuer) Bound(s Subject, audiences []string, expiration time.Duration, now time.Time) (string, time.Time, error) {
	if len(audiences) == 0 {
		audiences = i.audiences
	}
	exp := now.Add(expiration)
	c := &claims{
		RegisteredClaims: jwt.RegisteredClaims{
			Issuer:    i.issuer,
			Subject:   apiserverserviceaccount.MakeUsername(s.Namespace, s.Name),
			Audience:  audiences,
			ExpiresAt: jwt.NewNumericDate(exp),
			NotBefore: jwt.NewNumericDate(now),
			IssuedAt:  jwt.NewNumericDate(now),
			ID:        string(uuid.NewUUID()),
		},
		Kubernetes: &kubernetesClaims{Namespace: s.Namespace, ServiceAccount: &ref{Name: s.Name, UID: s.UID}, ClusterName: s.Cluster},
	}
	if s.SecretName != "" {
		c.Kubernetes.Secret = &ref{Name: s.SecretName, UID: s.SecretUID}
	}
	token, err := i.keys.sign(c)
	if err != nil {
		return "", time.Time{}, fmt.Errorf("signing token for %s/%s: %w", s.Namespace, s.Name, err)
	}
	return token, exp, nil
}

// Legacy mints the never-expiring token of a legacy token Secret.
func (i *Issuer) Legacy(s Subject) (string, error) {
	c := &claims{
		RegisteredClaims: jwt.RegisteredClaims{Issuer: LegacyIssuer, Subject: apiserverserviceaccount.MakeUsername(s.Namespace, s.Name)},
		LegacyNamespace:  s.Namespace, LegacySecretName: s.SecretName, LegacyName: s.Name, LegacyUID: s.UID, LegacyCluster: s.Cluster,
	}
	token, err := i.keys.sign(c)
	if err != nil {
		return "", fmt.Errorf("signing legacy token for %s/%s: %w", s.Namespace, s.Name, err)
	}
	return token, nil
}
