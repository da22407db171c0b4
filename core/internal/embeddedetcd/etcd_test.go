package embeddedetcd

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
)

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// put writes one key through a network client of endpoint with tlsConfig
// (nil: plain gRPC) and reports the error.
func put(endpoint string, tlsConfig *tls.Config) error {
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{endpoint}, TLS: tlsConfig, DialTimeout: 3 * time.Second})
	if err != nil {
		return err
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	_, err = c.Put(ctx, "/registry/probe", "x")
	return err
}

// TestClientCertificateRequired: the embedded etcd's client port answers
// only clients with a certificate of its own CA; the certificates are made
// once and kept across restarts, so the data stays reachable.
func TestClientCertificateRequired(t *testing.T) {
	dir := t.TempDir()
	clientPort, peerPort := freePort(t), freePort(t)
	s, err := Start(dir, clientPort, peerPort, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { s.Close() }()
	// Plain gRPC, as the embedded etcd spoke before.
	if err := put("http://127.0.0.1:"+strconv.Itoa(clientPort), nil); err == nil {
		t.Error("a plaintext client wrote a key")
	}
	if !strings.HasPrefix(s.ClientURL, "https://") {
		t.Errorf("client URL %s, want https://", s.ClientURL)
	}
	withCert, err := s.ClientTLS.Config()
	if err != nil {
		t.Fatal(err)
	}
	if err := put(s.ClientURL, withCert); err != nil {
		t.Fatalf("a client with the core's certificate was refused: %v", err)
	}

	ca, err := os.ReadFile(s.ClientTLS.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	// Trusting the server, without a client certificate.
	if err := put(s.ClientURL, &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}); err == nil {
		t.Error("a TLS client without a certificate wrote a key")
	}
	// Not verifying the server either.
	if err := put(s.ClientURL, &tls.Config{InsecureSkipVerify: true}); err == nil { //nolint:gosec // the attacker's client
		t.Error("a TLS client without a certificate (not verifying the server) wrote a key")
	}
	// A certificate of another CA (another root directory's).
	_, other, err := ensurePKI(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	foreign := TLSFiles{CAFile: s.ClientTLS.CAFile, CertFile: other.CertFile, KeyFile: other.KeyFile}
	foreignConfig, err := foreign.Config()
	if err != nil {
		t.Fatal(err)
	}
	if err := put(s.ClientURL, foreignConfig); err == nil {
		t.Error("a client with another CA's certificate wrote a key")
	}
	// The peer port takes no plain connection either.
	if err := put("http://127.0.0.1:"+strconv.Itoa(peerPort), nil); err == nil {
		t.Error("a plaintext client reached the peer port")
	}

	// Restart on the same directory: the same CA, the data reachable.
	s.Close()
	key := filepath.Join(dir, PKIDir, clientKey)
	before, err := os.ReadFile(key)
	if err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(key); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("client key mode %v (%v), want 0600", st.Mode().Perm(), err)
	}
	s, err = Start(dir, clientPort, peerPort, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	after, err := os.ReadFile(key)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before, after) {
		t.Error("the client key changed across a restart")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := s.InProcessClient().Get(ctx, "/registry/probe")
	if err != nil || len(resp.Kvs) != 1 {
		t.Fatalf("after the restart the key is gone (%v, %v)", resp, err)
	}
	if err := put(s.ClientURL, withCert); err != nil {
		t.Fatalf("after a restart the core's certificate was refused: %v", err)
	}
}

// TestPlainDataDirectory: a root directory whose etcd ran plain (a core
// from before TLS) starts with TLS and keeps its data.
func TestPlainDataDirectory(t *testing.T) {
	dir := t.TempDir()
	clientPort, peerPort := freePort(t), freePort(t)
	cfg := embed.NewConfig()
	cfg.Name = "meshplane"
	cfg.Dir = filepath.Join(dir, "etcd")
	cfg.LogLevel = "error"
	client := mustURL("http://127.0.0.1:" + strconv.Itoa(clientPort))
	peer := mustURL("http://127.0.0.1:" + strconv.Itoa(peerPort))
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{client}, []url.URL{client}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{peer}, []url.URL{peer}
	cfg.InitialCluster = cfg.Name + "=" + peer.String()
	plain, err := embed.StartEtcd(cfg)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-plain.Server.ReadyNotify():
	case <-time.After(60 * time.Second):
		t.Fatal("plain etcd not ready")
	}
	if err := put(client.String(), nil); err != nil {
		t.Fatal(err)
	}
	plain.Close()

	s, err := Start(dir, clientPort, peerPort, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := s.InProcessClient().Get(ctx, "/registry/probe")
	if err != nil || len(resp.Kvs) != 1 {
		t.Fatalf("the data is gone (%v, %v)", resp, err)
	}
	if err := put(client.String(), nil); err == nil {
		t.Error("after the switch to TLS a plaintext client still wrote a key")
	}
}
