package embeddedetcd

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

	"go.etcd.io/etcd/client/pkg/v3/transport"
)

// PKIDir is the directory, under the root directory, of the embedded
// etcd's own certificate authority and certificates. The CA signs nothing
// else: a certificate of it is good for etcd only, never for the API.
const PKIDir = "etcd-pki"

// The files of PKIDir.
const (
	caCert     = "ca.crt"
	caKey      = "ca.key"
	serverCert = "server.crt" // client and peer listeners (127.0.0.1, localhost)
	serverKey  = "server.key"
	clientCert = "client.crt" // the core's client certificate
	clientKey  = "client.key"
)

// TLSFiles are the PEM files a client of the embedded etcd needs: the CA
// of its serving certificate and a client certificate the CA signed.
type TLSFiles struct {
	CAFile, CertFile, KeyFile string
}

// ensurePKI creates, once, a CA and the server and client certificates in
// <rootDir>/etcd-pki; files already there are kept (across restarts, so
// clients that hold them keep working).
func ensurePKI(rootDir string) (server, client TLSFiles, err error) {
	dir := filepath.Join(rootDir, PKIDir)
	server = TLSFiles{CAFile: filepath.Join(dir, caCert), CertFile: filepath.Join(dir, serverCert), KeyFile: filepath.Join(dir, serverKey)}
	client = TLSFiles{CAFile: server.CAFile, CertFile: filepath.Join(dir, clientCert), KeyFile: filepath.Join(dir, clientKey)}
	// The client key is written last: its presence means all are there.
	if exists(client.KeyFile) && exists(client.CertFile) && exists(server.KeyFile) && exists(server.CertFile) && exists(server.CAFile) {
		return server, client, nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return server, client, err
	}
	ca, key, err := newCA()
	if err != nil {
		return server, client, err
	}
	if err := writeKeyPair(server.CAFile, filepath.Join(dir, caKey), ca.Raw, key); err != nil {
		return server, client, err
	}
	// The listeners' certificate serves both ends of the peer connection
	// (a member dials its peers with it), so it is a client one too.
	srv := &x509.Certificate{Subject: pkix.Name{CommonName: "meshplane-etcd"},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"}}
	if err := issue(ca, key, srv, server.CertFile, server.KeyFile); err != nil {
		return server, client, err
	}
	cl := &x509.Certificate{Subject: pkix.Name{CommonName: "meshplane"}, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	if err := issue(ca, key, cl, client.CertFile, client.KeyFile); err != nil {
		return server, client, err
	}
	return server, client, nil
}

func newCA() (*x509.Certificate, *ecdsa.PrivateKey, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{SerialNumber: serial(), Subject: pkix.Name{CommonName: fmt.Sprintf("meshplane-etcd-ca@%d", time.Now().Unix())},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().AddDate(10, 0, 0),
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature, BasicConstraintsValid: true, IsCA: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, fmt.Errorf("creating the etcd CA: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	return cert, key, err
}

// issue signs tmpl (subject and extended usages set) with the CA and
// writes the certificate and a new key.
func issue(ca *x509.Certificate, caKey *ecdsa.PrivateKey, tmpl *x509.Certificate, certPath, keyPath string) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	tmpl.SerialNumber = serial()
	tmpl.NotBefore, tmpl.NotAfter = time.Now().Add(-time.Hour), time.Now().AddDate(10, 0, 0)
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return fmt.Errorf("signing %s: %w", certPath, err)
	}
	return writeKeyPair(certPath, keyPath, der, key)
}

// writeKeyPair writes the key (0600) and then the certificate, each
// through a temporary file.
func writeKeyPair(certPath, keyPath string, der []byte, key *ecdsa.PrivateKey) error {
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	if err := writePEM(keyPath, "EC PRIVATE KEY", keyDER, 0o600); err != nil {
		return err
	}
	return writePEM(certPath, "CERTIFICATE", der, 0o644)
}

func writePEM(path, typ string, der []byte, mode os.FileMode) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), mode); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

func serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 126))
	return n
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// Config is the client TLS configuration of the files (nil when none is
// set: a plain http:// endpoint).
func (f TLSFiles) Config() (*tls.Config, error) {
	if f.CAFile == "" && f.CertFile == "" {
		return nil, nil
	}
	info := transport.TLSInfo{CertFile: f.CertFile, KeyFile: f.KeyFile, TrustedCAFile: f.CAFile}
	c, err := info.ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("etcd TLS: %w", err)
	}
	return c, nil
}
