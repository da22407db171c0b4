package storage

import (
	"context"
	"crypto/tls"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// TestEmbeddedEtcdRequiresClientCertificate: a local process reaching the
// core's embedded etcd port without the core's client certificate reads
// nothing (plaintext or TLS without a certificate); with the certificate
// in <root>/etcd-pki it reads the tenants' keys, across a restart of the
// core (the certificates are kept).
func TestEmbeddedEtcdRequiresClientCertificate(t *testing.T) {
	// Over gRPC, so the client port is the core's own path too.
	s := framework.StartServer(t, framework.WithExtraArgs("--embedded-etcd-in-process-client=false"))
	framework.RequireCode(t, s.AdminRequest(t, "POST", "/clusters/root/api/v1/namespaces", framework.NamespaceJSON(t, "etcd-tls")), "creating a namespace", 201)
	port := strconv.Itoa(s.EtcdClientPort)
	pki := filepath.Join(s.RootDir, "etcd-pki")
	keys := func(endpoint string, tlsConfig *tls.Config) (int, error) {
		c, err := clientv3.New(clientv3.Config{Endpoints: []string{endpoint}, TLS: tlsConfig, DialTimeout: 3 * time.Second})
		if err != nil {
			return 0, err
		}
		defer c.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		resp, err := c.Get(ctx, "/registry/", clientv3.WithPrefix(), clientv3.WithKeysOnly())
		if err != nil {
			return 0, err
		}
		return len(resp.Kvs), nil
	}
	for name, attempt := range map[string]struct {
		endpoint string
		tls      *tls.Config
	}{
		"plaintext":               {"http://127.0.0.1:" + port, nil},
		"TLS without certificate": {"https://127.0.0.1:" + port, &tls.Config{InsecureSkipVerify: true}}, //nolint:gosec // the attacker's client
	} {
		if n, err := keys(attempt.endpoint, attempt.tls); err == nil {
			t.Errorf("%s: read %d keys of the core's etcd", name, n)
		}
	}
	withCert, err := transport.TLSInfo{CertFile: filepath.Join(pki, "client.crt"), KeyFile: filepath.Join(pki, "client.key"),
		TrustedCAFile: filepath.Join(pki, "ca.crt")}.ClientConfig()
	if err != nil {
		t.Fatal(err)
	}
	check := func(when string) {
		n, err := keys("https://127.0.0.1:"+port, withCert)
		if err != nil {
			t.Fatalf("%s: the core's client certificate was refused: %v", when, err)
		}
		if n == 0 {
			t.Errorf("%s: no keys under /registry/", when)
		}
	}
	check("before a restart")
	if err := s.Restart(); err != nil {
		t.Fatalf("restarting: %v", err)
	}
	check("after a restart")
	if r := s.AdminRequest(t, "GET", "/clusters/root/api/v1/namespaces/etcd-tls", nil); !strings.Contains(r.String(), `"name":"etcd-tls"`) {
		t.Errorf("after a restart the namespace is gone: %s", r.String())
	}
}
