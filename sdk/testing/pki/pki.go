// Package pki issues throw-away certificates for tests: a CA, and server
// or client certificates it signs, written as PEM files.
package pki

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// CA is a certificate authority whose certificate is at CertFile.
type CA struct {
	CertFile string
	cert     *x509.Certificate
	key      *ecdsa.PrivateKey
	dir      string
}

// Pair is a certificate and its key, as PEM files.
type Pair struct {
	CertFile, KeyFile string
}

// NewCA creates a CA named name in dir (name.crt).
func NewCA(dir, name string) (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	ca := &CA{CertFile: filepath.Join(dir, name+".crt"), cert: cert, key: key, dir: dir}
	return ca, writePEM(ca.CertFile, "CERTIFICATE", der)
}

// Client issues a client certificate for user (CN) in groups (O), written
// as name.crt and name.key.
func (c *CA) Client(name, user string, groups ...string) (Pair, error) {
	return c.issue(name, &x509.Certificate{Subject: pkix.Name{CommonName: user, Organization: groups},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
}

// Server issues a serving certificate for hosts (IPs or DNS names), also
// good as a client certificate (etcd peers use one for both).
func (c *CA) Server(name string, hosts ...string) (Pair, error) {
	// Client use too: etcd members present their serving certificate to
	// their peers.
	tmpl := &x509.Certificate{Subject: pkix.Name{CommonName: name}, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	return c.issue(name, tmpl)
}

// TLS returns the pair as a tls.Certificate.
func (p Pair) TLS() (tls.Certificate, error) { return tls.LoadX509KeyPair(p.CertFile, p.KeyFile) }

func (c *CA) issue(name string, tmpl *x509.Certificate) (Pair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return Pair{}, err
	}
	tmpl.SerialNumber = serial()
	tmpl.NotBefore, tmpl.NotAfter = time.Now().Add(-time.Hour), time.Now().Add(24*time.Hour)
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	der, err := x509.CreateCertificate(rand.Reader, tmpl, c.cert, &key.PublicKey, c.key)
	if err != nil {
		return Pair{}, fmt.Errorf("issuing %s: %w", name, err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return Pair{}, err
	}
	p := Pair{CertFile: filepath.Join(c.dir, name+".crt"), KeyFile: filepath.Join(c.dir, name+".key")}
	if err := writePEM(p.CertFile, "CERTIFICATE", der); err != nil {
		return Pair{}, err
	}
	return p, writePEM(p.KeyFile, "EC PRIVATE KEY", keyDER)
}

func serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	return n
}

func writePEM(path, typ string, der []byte) error {
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600)
}
