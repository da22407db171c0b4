package serviceaccount

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/golang-jwt/jwt/v5"
	"k8s.io/client-go/util/keyutil"
)

// SigningKeyFile is the signing key generated into the root directory when
// --service-account-signing-key-file is not given.
const SigningKeyFile = "service-account.key"

// EnsureSigningKey writes a new RSA 2048 private key to path unless a file
// is already there: generated once, kept across restarts.
func EnsureSigningKey(path string) error {
	if _, err := os.Stat(path); err == nil {
		return nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return err
	}
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return fmt.Errorf("generating service account signing key: %w", err)
	}
	data := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return keyutil.WriteKey(path, data)
}

// Keys sign new tokens and verify presented ones.
type Keys struct {
	signer crypto.Signer
	method jwt.SigningMethod
	kid    string
	// verify maps key ids to public keys; every key is also tried for
	// tokens without a kid.
	verify map[string]crypto.PublicKey
}

// LoadKeys reads the signing key (a PEM RSA or ECDSA P-256 private key) and
// the verification keys (PEM public or private keys, several per file).
// The signing key's public half always verifies.
func LoadKeys(signingKeyFile string, keyFiles []string) (*Keys, error) {
	priv, err := keyutil.PrivateKeyFromFile(signingKeyFile)
	if err != nil {
		return nil, fmt.Errorf("--service-account-signing-key-file: %w", err)
	}
	k := &Keys{verify: map[string]crypto.PublicKey{}}
	switch p := priv.(type) {
	case *rsa.PrivateKey:
		k.signer, k.method = p, jwt.SigningMethodRS256
	case *ecdsa.PrivateKey:
		if p.Curve != elliptic.P256() {
			return nil, fmt.Errorf("--service-account-signing-key-file %s: only ECDSA P-256 keys are supported", signingKeyFile)
		}
		k.signer, k.method = p, jwt.SigningMethodES256
	default:
		return nil, fmt.Errorf("--service-account-signing-key-file %s: unsupported key type %T", signingKeyFile, priv)
	}
	if k.kid, err = keyID(k.signer.Public()); err != nil {
		return nil, err
	}
	k.verify[k.kid] = k.signer.Public()
	for _, f := range keyFiles {
		pubs, err := keyutil.PublicKeysFromFile(f)
		if err != nil {
			return nil, fmt.Errorf("--service-account-key-file: %w", err)
		}
		for _, pub := range pubs {
			id, err := keyID(pub)
			if err != nil {
				return nil, fmt.Errorf("--service-account-key-file %s: %w", f, err)
			}
			k.verify[id] = pub
		}
	}
	return k, nil
}

// keyID is the key id kube-apiserver uses: the unpadded base64url SHA-256
// of the public key's PKIX DER.
func keyID(pub crypto.PublicKey) (string, error) {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return "", fmt.Errorf("public key: %w", err)
	}
	sum := sha256.Sum256(der)
	return base64.RawURLEncoding.EncodeToString(sum[:]), nil
}

// sign returns a signed JWT of claims.
func (k *Keys) sign(claims jwt.Claims) (string, error) {
	t := jwt.NewWithClaims(k.method, claims)
	t.Header["kid"] = k.kid
	return t.SignedString(k.signer)
}

// keyFunc picks the verification key of a token.
func (k *Keys) keyFunc(t *jwt.Token) (any, error) {
	if kid, ok := t.Header["kid"].(string); ok && kid != "" {
		if pub, ok := k.verify[kid]; ok {
			return pub, nil
		}
		return nil, fmt.Errorf("unknown key id %q", kid)
	}
	set := jwt.VerificationKeySet{}
	for _, pub := range k.verify {
		set.Keys = append(set.Keys, pub)
	}
	return set, nil
}
