package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/meshplane/meshplane/sdk/process"
	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// TestChartShards runs the chart's sharded platform (global.shards=2) as
// processes: the root shard, shard b (joining root with the chart's shard
// admin kubeconfig) and the front proxy, each with the rendered
// certificates and arguments (Service names mapped to loopback ports).
// Shard b registers in root, and a user with a client certificate of the
// proxy's client CA reaches a shard through the proxy as that user: the
// shard believes the proxy's identity headers (request-header CA, the
// proxy's client certificate).
func TestChartShards(t *testing.T) {
	root, err := framework.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	objs := renderChart(t, root, "--set", "global.shards=2")
	secret := func(name string) *corev1.Secret {
		s, ok := objs["Secret/"+name].(*corev1.Secret)
		if !ok {
			t.Fatalf("the chart rendered no Secret %s", name)
		}
		return s
	}
	pki, fp := secret("mp-core-pki").Data, secret("mp-front-proxy-pki").Data
	ports, err := process.FreePorts(8)
	if err != nil {
		t.Fatal(err)
	}
	addr := func(i int) string { return "127.0.0.1:" + strconv.Itoa(ports[i]) }
	rootAddr, bAddr, proxyAddr := addr(0), addr(3), addr(6)
	dir := t.TempDir()
	write := func(path string, b []byte) string {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	// The mounted Secrets.
	fpDir := filepath.Join(dir, "front-proxy")
	for _, k := range []string{"tls.crt", "tls.key", "client-ca.crt", "proxy-client.crt", "proxy-client.key", "requestheader-ca.crt"} {
		write(filepath.Join(fpDir, k), fp[k])
	}
	shardAdmin, err := clientcmd.Load([]byte(secret("mp-shard-admin-kubeconfig").StringData["kubeconfig"]))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range shardAdmin.Clusters {
		c.Server = "https://" + rootAddr
	}
	shardAdminPath := filepath.Join(dir, "shard-admin", "kubeconfig")
	if err := os.MkdirAll(filepath.Dir(shardAdminPath), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := clientcmd.WriteToFile(*shardAdmin, shardAdminPath); err != nil {
		t.Fatal(err)
	}
	paths := strings.NewReplacer("/etc/meshplane/front-proxy", fpDir, "/etc/meshplane/shard-admin/kubeconfig", shardAdminPath,
		"https://mp-front-proxy.meshplane-system.svc.cluster.local:6443", "https://"+proxyAddr)

	start := func(name string, args []string) *process.Process {
		bin, err := framework.Binary(map[bool]string{true: "front-proxy", false: "meshplane"}[name == "front-proxy"],
			map[bool]string{true: "proxy", false: "core"}[name == "front-proxy"],
			map[bool]string{true: "./cmd/front-proxy", false: "./cmd/meshplane"}[name == "front-proxy"])
		if err != nil {
			t.Fatal(err)
		}
		return startLogged(t, name, exec.Command(bin, args...), 25)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	// shard starts shard name (root or b) from its StatefulSet.
	shard := func(name, object, listen string, etcd int) *process.Process {
		rootDir := filepath.Join(dir, "shard-"+name)
		files := map[string][]byte{"ca.crt": pki["ca.crt"], "ca.key": pki["ca.key"], "admin-tokens": pki["admin-tokens"],
			"service-account.key": pki["service-account.key"], "apiserver.crt": pki["serving-"+name+".crt"], "apiserver.key": pki["serving-"+name+".key"]}
		for f, b := range files {
			write(filepath.Join(rootDir, f), b)
		}
		sts, ok := objs["StatefulSet/"+object].(*appsv1.StatefulSet)
		if !ok {
			t.Fatalf("the chart rendered no StatefulSet %s", object)
		}
		var args []string
		for _, a := range sts.Spec.Template.Spec.Containers[0].Args {
			switch {
			case strings.HasPrefix(a, "--authorization-webhook-"):
				continue // no webhook here
			case strings.HasPrefix(a, "--root-directory="):
				a = "--root-directory=" + rootDir
			case strings.HasPrefix(a, "--bind-address="):
				a = "--bind-address=127.0.0.1"
			case strings.HasPrefix(a, "--secure-port="):
				a = "--secure-port=" + strings.Split(listen, ":")[1]
			case strings.HasPrefix(a, "--external-hostname="):
				a = "--external-hostname=" + listen
			case strings.HasPrefix(a, "--shard-base-url="):
				a = "--shard-base-url=https://" + listen
			}
			args = append(args, paths.Replace(a))
		}
		args = append(args, "--embedded-etcd-client-port="+strconv.Itoa(ports[etcd]), "--embedded-etcd-peer-port="+strconv.Itoa(ports[etcd+1]))
		p := start("shard-"+name, args)
		if _, err := process.WaitReady(ctx, "https://"+listen+"/readyz", 250*time.Millisecond, p.Exited()); err != nil {
			t.Fatalf("shard %s: %v", name, err)
		}
		return p
	}
	shard("root", "mp-core", rootAddr, 1)
	shard("b", "mp-core-b", bAddr, 4)

	proxy := objs["Deployment/mp-front-proxy"].(*appsv1.Deployment).Spec.Template.Spec.Containers[0]
	var proxyArgs []string
	for _, a := range proxy.Args {
		switch {
		case strings.HasPrefix(a, "--bind-address="):
			a = "--bind-address=127.0.0.1"
		case strings.HasPrefix(a, "--secure-port="):
			a = "--secure-port=" + strconv.Itoa(ports[6])
		case strings.HasPrefix(a, "--metrics-address="):
			a = "--metrics-address=" + addr(7)
		}
		proxyArgs = append(proxyArgs, paths.Replace(a))
	}
	p := start("front-proxy", proxyArgs)
	if _, err := process.WaitReady(ctx, "http://"+addr(7)+"/readyz", 250*time.Millisecond, p.Exited()); err != nil {
		t.Fatalf("front proxy: %v", err)
	}

	// Shard b registered in root: the shard admin sees it through the proxy.
	proxyCA := x509.NewCertPool()
	proxyCA.AppendCertsFromPEM(fp["serving-ca.crt"])
	adminToken := strings.Fields(string(pki["admin-tokens"]))[1]
	get := func(hc *http.Client, path, token string) (int, string) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+proxyAddr+path, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	plain := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: proxyCA, ServerName: "mp-front-proxy.meshplane-system.svc"}}}
	var code int
	var body string
	for {
		code, body = get(plain, "/clusters/root/apis/core.kcp.io/v1alpha1/shards/b", adminToken)
		if code == http.StatusOK || ctx.Err() != nil {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	if code != http.StatusOK {
		t.Fatalf("Shard b through the proxy: %d %s", code, body)
	}

	// A user with a client certificate of the proxy's client CA is that
	// user on the shard.
	user := clientCert(t, fp["client-ca.crt"], fp["client-ca.key"], "carol")
	certed := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: proxyCA,
		ServerName: "mp-front-proxy.meshplane-system.svc", Certificates: []tls.Certificate{user}}}}
	code, body = get(certed, "/clusters/root/apis/tenancy.kcp.io/v1alpha1/workspaces", "")
	if code != http.StatusForbidden || !strings.Contains(body, `User \"carol\"`) {
		t.Errorf("carol through the proxy: %d %s; want 403 naming carol (authenticated by the proxy's identity headers)", code, body)
	}

	// A certificate of another CA (an attacker's) does not make its holder carol.
	otherCA, otherKey := selfSignedCA(t)
	forged := clientCert(t, otherCA, otherKey, "carol")
	forger := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: proxyCA,
		ServerName: "mp-front-proxy.meshplane-system.svc", Certificates: []tls.Certificate{forged}}}}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+proxyAddr+"/clusters/root/apis/tenancy.kcp.io/v1alpha1/workspaces", nil)
	if resp, err := forger.Do(req); err == nil {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if strings.Contains(string(b), `User \"carol\"`) {
			t.Errorf("a certificate of another CA is carol: %d %s", resp.StatusCode, b)
		}
	}
}

// selfSignedCA is a CA certificate and key (PEM) nobody trusts.
func selfSignedCA(t *testing.T) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "other-ca"}, IsCA: true, BasicConstraintsValid: true,
		NotBefore: time.Now().Add(-time.Minute), NotAfter: time.Now().Add(time.Hour), KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb})
}

// clientCert signs a client certificate for user cn with the CA.
func clientCert(t *testing.T, caPEM, caKeyPEM []byte, cn string) tls.Certificate {
	t.Helper()
	caBlock, _ := pem.Decode(caPEM)
	keyBlock, _ := pem.Decode(caKeyPEM)
	if caBlock == nil || keyBlock == nil {
		t.Fatal("no client CA in the chart's front-proxy Secret")
	}
	ca, err := x509.ParseCertificate(caBlock.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	caKey, err := x509.ParseECPrivateKey(keyBlock.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Minute), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}
