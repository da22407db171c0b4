// Package serving gives the proxy its TLS configuration: a serving
// certificate (given, or self-signed and written out so the core can be
// told to trust it) and client certificates required from the CA of the
// core.
package serving

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

// Files written to the certificate directory.
const (
	CertFile = "serving.crt"
	KeyFile  = "serving.key"
)

// Options say where the serving certificate comes from and which CA signs
// accepted client certificates.
type Options struct {
	CertFile, KeyFile string
	// CertDir receives a self-signed certificate when CertFile is empty
	// (reused when already there).
	CertDir string
	// Hosts the self-signed certificate is valid for.
	Hosts        []string
	ClientCAFile string
}

// Config returns the server's TLS configuration.
func Config(o Options) (*tls.Config, error) {
	if o.ClientCAFile == "" {
		return nil, fmt.Errorf("a client CA file is required: only the core may call the proxy")
	}
	caPEM, err := os.ReadFile(o.ClientCAFile)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return nil, fmt.Errorf("%s holds no PEM certificate", o.ClientCAFile)
	}
	certFile, keyFile := o.CertFile, o.KeyFile
	if certFile == "" {
		if certFile, keyFile, err = selfSigned(o.CertDir, o.Hosts); err != nil {
			return nil, err
		}
	}
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, err
	}
	return &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{cert},
		ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: pool}, nil
}

func selfSigned(dir string, hosts []string) (string, string, error) {
	if dir == "" {
		return "", "", fmt.Errorf("neither a serving certificate nor a directory for a self-signed one")
	}
	certPath, keyPath := filepath.Join(dir, CertFile), filepath.Join(dir, KeyFile)
	if _, err := os.Stat(certPath); err == nil {
		return certPath, keyPath, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", "", err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", "", err
	}
	serial, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 126))
	tmpl := &x509.Certificate{SerialNumber: serial, Subject: pkix.Name{CommonName: "kubecluster-mounts"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(365 * 24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true, IsCA: true}
	for _, h := range append([]string{"localhost", "127.0.0.1"}, hosts...) {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else if h != "" {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return "", "", err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return "", "", err
	}
	if err := os.WriteFile(keyPath, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		return "", "", err
	}
	return certPath, keyPath, os.WriteFile(certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644)
}
