// Package authentication assembles how the server learns who is calling:
// admin and static bearer tokens, x509 client certificates, identity
// headers from a trusted front proxy, and anonymous access to the health
// and version endpoints only.
package authentication

import (
	"context"
	"crypto/x509"
	"fmt"
	"net/http"
	"os"

	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/group"
	"k8s.io/apiserver/pkg/authentication/request/bearertoken"
	"k8s.io/apiserver/pkg/authentication/request/headerrequest"
	"k8s.io/apiserver/pkg/authentication/request/union"
	x509request "k8s.io/apiserver/pkg/authentication/request/x509"
	"k8s.io/apiserver/pkg/authentication/token/tokenfile"
	tokenunion "k8s.io/apiserver/pkg/authentication/token/union"
	"k8s.io/apiserver/pkg/authentication/user"
)

// Groups of the admin users, as in kcp.
const (
	KCPAdminGroup = "system:kcp:admin"
	MastersGroup  = user.SystemPrivilegedGroup
)

// PublicPaths are answered for anonymous callers too.
var PublicPaths = map[string]bool{"/healthz": true, "/livez": true, "/readyz": true, "/version": true}

// Config says which credentials are accepted.
type Config struct {
	// Tokens maps bearer tokens to users (the admin users).
	Tokens map[string]*user.DefaultInfo
	// TokenAuthFile is a kube-style static token CSV file.
	TokenAuthFile string
	// ClientCAFile signs accepted client certificates.
	ClientCAFile string
	// RequestHeaderCAFile signs the client certificate of a front proxy
	// whose X-Remote-User, X-Remote-Uid, X-Remote-Group and
	// X-Remote-Extra-* headers are believed; RequestHeaderAllowedNames
	// limits the accepted common names (any the CA signed when empty).
	RequestHeaderCAFile       string
	RequestHeaderAllowedNames []string
}

// The identity headers a front proxy sets (kube-apiserver's defaults).
var (
	UserHeaders         = []string{"X-Remote-User"}
	UIDHeaders          = []string{"X-Remote-Uid"}
	GroupHeaders        = []string{"X-Remote-Group"}
	ExtraHeaderPrefixes = []string{"X-Remote-Extra-"}
)

// New returns the request authenticator and the token authenticator
// (the latter answers TokenReviews). The request authenticator knows no
// anonymous callers: WithAnonymousPublic adds them after every other
// authenticator.
func New(c Config) (authenticator.Request, authenticator.Token, error) {
	tokens := []authenticator.Token{staticTokens(c.Tokens)}
	if c.TokenAuthFile != "" {
		f, err := tokenfile.NewCSV(c.TokenAuthFile)
		if err != nil {
			return nil, nil, fmt.Errorf("--token-auth-file: %w", err)
		}
		tokens = append(tokens, f)
	}
	token := tokenunion.New(tokens...)
	var reqs []authenticator.Request
	if c.RequestHeaderCAFile != "" {
		// First: a request from the front proxy carries its certificate and,
		// possibly, the caller's bearer token, which must not win.
		verify, err := x509request.NewStaticVerifierFromFile(c.RequestHeaderCAFile)
		if err != nil {
			return nil, nil, fmt.Errorf("--requestheader-client-ca-file: %w", err)
		}
		reqs = append(reqs, headerrequest.NewDynamicVerifyOptionsSecure(verify,
			headerrequest.StaticStringSlice(c.RequestHeaderAllowedNames),
			headerrequest.StaticStringSlice(UserHeaders), headerrequest.StaticStringSlice(UIDHeaders),
			headerrequest.StaticStringSlice(GroupHeaders), headerrequest.StaticStringSlice(ExtraHeaderPrefixes)))
	}
	reqs = append(reqs, bearertoken.New(token))
	if c.ClientCAFile != "" {
		pem, err := os.ReadFile(c.ClientCAFile)
		if err != nil {
			return nil, nil, fmt.Errorf("--client-ca-file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, nil, fmt.Errorf("--client-ca-file %s holds no certificates", c.ClientCAFile)
		}
		opts := x509request.DefaultVerifyOptions()
		opts.Roots = pool
		reqs = append(reqs, x509request.New(opts, x509request.CommonNameUserConversion))
	}
	return group.NewAuthenticatedGroupAdder(union.New(reqs...)), token, nil
}

// WithAnonymousPublic lets callers no authenticator of a recognises reach
// PublicPaths as system:anonymous. It must wrap the complete chain: a
// caller with credentials (a service-account or JWT token too) stays who
// it is on public paths, which the authorizer of a virtual workspace
// decides as for any other path.
func WithAnonymousPublic(a authenticator.Request) authenticator.Request {
	return union.New(a, anonymousPublic{})
}

type staticTokens map[string]*user.DefaultInfo

func (s staticTokens) AuthenticateToken(ctx context.Context, token string) (*authenticator.Response, bool, error) {
	u, ok := s[token]
	if !ok {
		return nil, false, nil
	}
	return &authenticator.Response{User: u}, true, nil
}

// anonymousPublic lets callers without credentials reach PublicPaths only.
type anonymousPublic struct{}

func (anonymousPublic) AuthenticateRequest(r *http.Request) (*authenticator.Response, bool, error) {
	if !PublicPaths[r.URL.Path] {
		return nil, false, nil
	}
	return &authenticator.Response{User: &user.DefaultInfo{
		Name: user.Anonymous, Groups: []string{user.AllUnauthenticated}}}, true, nil
}
