// Package servingcert tests --tls-cert-file and --tls-private-key-file
// (kcp's names): the core serves a certificate it did not make (e.g. one
// cert-manager keeps in a mounted Secret) and picks up its renewal.
package servingcert

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

func TestMain(m *testing.M) { os.Exit(framework.RunMain(m)) }

func TestServingCertificateFromFlagsRenewed(t *testing.T) {
	framework.SkipIfExternal(t, "it starts a core with serving-certificate flags")
	dir := t.TempDir()
	ca, caKey := newCA(t)
	certFile, keyFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	writeServing(t, ca, caKey, "issued-1", certFile, keyFile)

	s := framework.StartServer(t, framework.WithExtraArgs("--tls-cert-file", certFile, "--tls-private-key-file", keyFile))
	if _, err := os.Stat(filepath.Join(s.RootDir, "apiserver.crt")); err == nil {
		t.Errorf("the core made a serving certificate of its own in %s besides --tls-cert-file", s.RootDir)
	}
	u, err := url.Parse(s.BaseURL)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	served := func() (string, error) {
		conn, err := tls.Dial("tcp", u.Host, &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"})
		if err != nil {
			return "", err
		}
		defer conn.Close()
		return conn.ConnectionState().PeerCertificates[0].Subject.CommonName, nil
	}
	cn, err := served()
	if err != nil || cn != "issued-1" {
		t.Fatalf("served certificate: CN %q, %v; want issued-1 verified by the test's CA", cn, err)
	}

	// A renewal (cert-manager rewrites the Secret's files): served without a restart.
	writeServing(t, ca, caKey, "issued-2", certFile, keyFile)
	framework.Eventually(t, 2*time.Minute, time.Second, "the renewed certificate served", func() (bool, string) {
		cn, err := served()
		if err != nil {
			return false, err.Error()
		}
		return cn == "issued-2", "serving CN " + cn
	})
}

func TestServingCertificateFlagsGoTogether(t *testing.T) {
	framework.SkipIfExternal(t, "it runs the meshplane binary")
	dir := t.TempDir()
	ca, caKey := newCA(t)
	certFile, keyFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	writeServing(t, ca, caKey, "x", certFile, keyFile)
	_, err := framework.Start(framework.WithExtraArgs("--tls-cert-file", certFile), framework.WithStartTimeout(time.Minute))
	if err == nil {
		t.Fatal("the core started with --tls-cert-file but no --tls-private-key-file")
	}
}

func newCA(t *testing.T) (*x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test issuer"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return ca, key
}

// writeServing writes a serving certificate for 127.0.0.1 named cn, signed
// by ca, the way a Secret volume updates: new files renamed into place.
func writeServing(t *testing.T, ca *x509.Certificate, caKey *ecdsa.PrivateKey, cn, certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial, _ := rand.Int(rand.Reader, big.NewInt(1<<62))
	tmpl := &x509.Certificate{
		SerialNumber: serial, Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	for f, b := range map[string][]byte{
		certFile: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		keyFile:  pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}),
	} {
		if err := os.WriteFile(f+".new", b, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(f+".new", f); err != nil {
			t.Fatal(err)
		}
	}
}
