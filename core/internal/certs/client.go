package certs

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"path/filepath"
	"time"
)

// Mount client certificate files: what the core presents to mount servers.
const (
	MountClientCert = "mount-client.crt"
	MountClientKey  = "mount-client.key"
	// MountClientName is its common name.
	MountClientName = "system:meshplane:mount-proxy"
)

// EnsureMountClient makes sure dir holds a client certificate for mount
// servers, signed by dir's CA. It returns empty paths when dir has no CA
// key of ours (serving certificates provided from outside).
func EnsureMountClient(dir string) (certPath, keyPath string, err error) {
	certPath, keyPath = filepath.Join(dir, MountClientCert), filepath.Join(dir, MountClientKey)
	if exists(certPath) && exists(keyPath) {
		return certPath, keyPath, nil
	}
	caCertPath, caKeyPath := filepath.Join(dir, CACert), filepath.Join(dir, CAKey)
	if !exists(caCertPath) || !exists(caKeyPath) {
		return "", "", nil
	}
	caCert, caKey, err := loadOrCreateCA(caCertPath, caKeyPath)
	if err != nil {
		return "", "", err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", "", err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: MountClientName},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(10 * 365 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
	if err != nil {
		return "", "", fmt.Errorf("signing the mount client certificate: %w", err)
	}
	if err := writeKey(keyPath, key); err != nil {
		return "", "", err
	}
	return certPath, keyPath, writePEM(certPath, "CERTIFICATE", der, 0o644)
}
