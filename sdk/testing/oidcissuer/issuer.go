// Package oidcissuer is a real OpenID Connect issuer for tests: discovery
// (/.well-known/openid-configuration) and JWKS over TLS on 127.0.0.1 with
// a self-signed certificate, and JWTs signed with RS256 or ES256 keys it
// generates. One server hosts several issuers, each under its own path
// (https://127.0.0.1:<port>/<name>). Only the standard library is used.
//
//	srv, _ := oidcissuer.Start()
//	defer srv.Close()
//	iss := srv.NewIssuer("corp", oidcissuer.ES256)
//	token := iss.Token(oidcissuer.Claims{"sub": "alice", "aud": "my-app"}, time.Hour)
//
// Use srv.CAPEM() as certificateAuthority in an AuthenticationConfiguration.
package oidcissuer

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"
)

// Algorithm is a JWS signing algorithm.
type Algorithm string

// The algorithms an issuer can sign with.
const (
	RS256 Algorithm = "RS256"
	ES256 Algorithm = "ES256"
)

// Server is an HTTPS server hosting issuers.
type Server struct {
	srv *httptest.Server

	mu      sync.RWMutex
	issuers map[string]*Issuer
}

// Start serves on a free 127.0.0.1 port until Close.
func Start() (*Server, error) {
	s := &Server{issuers: map[string]*Issuer{}}
	s.srv = httptest.NewUnstartedServer(http.HandlerFunc(s.serve))
	s.srv.StartTLS()
	return s, nil
}

// Close stops the server.
func (s *Server) Close() { s.srv.Close() }

// CAPEM is the PEM certificate clients must trust (the server's
// self-signed certificate, valid for 127.0.0.1).
func (s *Server) CAPEM() string {
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.srv.Certificate().Raw}))
}

// Issuer signs tokens with its key and publishes the public key.
type Issuer struct {
	// URL is the issuer URL (the "iss" claim and discovery base).
	URL string
	alg Algorithm
	kid string
	key crypto.Signer
}

// NewIssuer adds an issuer at /<name> with a fresh key.
func (s *Server) NewIssuer(name string, alg Algorithm) (*Issuer, error) {
	key, err := newKey(alg)
	if err != nil {
		return nil, err
	}
	iss := &Issuer{URL: s.srv.URL + "/" + name, alg: alg, kid: name + "-1", key: key}
	s.mu.Lock()
	s.issuers[name] = iss
	s.mu.Unlock()
	return iss, nil
}

func newKey(alg Algorithm) (crypto.Signer, error) {
	switch alg {
	case RS256:
		return rsa.GenerateKey(rand.Reader, 2048)
	case ES256:
		return ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	}
	return nil, fmt.Errorf("unsupported algorithm %q", alg)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	name, rest, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	s.mu.RLock()
	iss := s.issuers[name]
	s.mu.RUnlock()
	if iss == nil {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	switch rest {
	case ".well-known/openid-configuration":
		_ = json.NewEncoder(w).Encode(map[string]any{
			"issuer":                                iss.URL,
			"jwks_uri":                              iss.URL + "/keys",
			"authorization_endpoint":                iss.URL + "/auth",
			"token_endpoint":                        iss.URL + "/token",
			"response_types_supported":              []string{"id_token"},
			"subject_types_supported":               []string{"public"},
			"id_token_signing_alg_values_supported": []string{string(iss.alg)},
		})
	case "keys":
		_ = json.NewEncoder(w).Encode(map[string]any{"keys": []any{iss.jwk()}})
	default:
		http.NotFound(w, r)
	}
}

// jwk is the issuer's public key as a JSON Web Key.
func (i *Issuer) jwk() map[string]any {
	b64 := func(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }
	switch pub := i.key.Public().(type) {
	case *rsa.PublicKey:
		return map[string]any{"kty": "RSA", "use": "sig", "alg": string(i.alg), "kid": i.kid,
			"n": b64(pub.N.Bytes()), "e": b64(big.NewInt(int64(pub.E)).Bytes())}
	case *ecdsa.PublicKey:
		return map[string]any{"kty": "EC", "use": "sig", "alg": string(i.alg), "kid": i.kid, "crv": "P-256",
			"x": b64(pad32(pub.X.Bytes())), "y": b64(pad32(pub.Y.Bytes()))}
	}
	return nil
}

// Claims of a token.
type Claims map[string]any

// Token returns a signed JWT with claims, "iss" set to the issuer and
// "iat"/"exp" set from now and ttl unless claims sets them (a negative ttl
// gives an expired token).
func (i *Issuer) Token(claims Claims, ttl time.Duration) string {
	return i.sign(claims, ttl, i.key)
}

// ForgedToken is Token signed with another key under the issuer's key id:
// its signature does not verify.
func (i *Issuer) ForgedToken(claims Claims, ttl time.Duration) string {
	other, err := newKey(i.alg)
	if err != nil {
		panic(err)
	}
	return i.sign(claims, ttl, other)
}

func (i *Issuer) sign(claims Claims, ttl time.Duration, key crypto.Signer) string {
	now := time.Now()
	c := Claims{"iss": i.URL, "iat": now.Unix(), "exp": now.Add(ttl).Unix()}
	for k, v := range claims {
		c[k] = v
	}
	enc := func(v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			panic(err)
		}
		return base64.RawURLEncoding.EncodeToString(b)
	}
	input := enc(map[string]string{"alg": string(i.alg), "typ": "JWT", "kid": i.kid}) + "." + enc(c)
	digest := sha256.Sum256([]byte(input))
	var sig []byte
	switch k := key.(type) {
	case *rsa.PrivateKey:
		s, err := rsa.SignPKCS1v15(rand.Reader, k, crypto.SHA256, digest[:])
		if err != nil {
			panic(err)
		}
		sig = s
	case *ecdsa.PrivateKey:
		r, s, err := ecdsa.Sign(rand.Reader, k, digest[:])
		if err != nil {
			panic(err)
		}
		sig = append(pad32(r.Bytes()), pad32(s.Bytes())...)
	}
	return input + "." + base64.RawURLEncoding.EncodeToString(sig)
}

// pad32 left-pads a big-endian P-256 coordinate to 32 bytes, as JWS wants.
func pad32(b []byte) []byte {
	if len(b) >= 32 {
		return b
	}
	return append(make([]byte, 32-len(b)), b...)
}
