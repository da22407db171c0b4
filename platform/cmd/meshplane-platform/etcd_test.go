package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/meshplane/meshplane/sdk/process"
	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// TestChartExternalEtcd runs the core as the chart renders it with an
// external etcd (core.etcd.external): a TLS etcd member with client
// certificate authentication, the client certificate where the chart
// mounts the user's Secret. The data lives in that etcd: a core started
// again on an empty root directory (the chart gives it an emptyDir) still
// has it.
func TestChartExternalEtcd(t *testing.T) {
	root, err := framework.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	objs := renderChart(t, root, "--set", "core.etcd.external.enabled=true",
		"--set", "core.etcd.external.servers={https://etcd-0.etcd:2379}", "--set", "core.etcd.external.secretName=etcd-client")
	sts := objs["StatefulSet/mp-core"].(*appsv1.StatefulSet)
	if len(sts.Spec.VolumeClaimTemplates) != 0 {
		t.Errorf("with an external etcd the core claims volumes: %v", sts.Spec.VolumeClaimTemplates)
	}
	pki := objs["Secret/mp-core-pki"].(*corev1.Secret).Data

	// The etcd member and the client certificate the user's Secret holds.
	dir := t.TempDir()
	etcdDir := filepath.Join(dir, "etcd-client")
	caCert, caKey := newCA(t)
	writePEM(t, filepath.Join(etcdDir, "ca.crt"), "CERTIFICATE", caCert.Raw)
	srvDER, srvKey := issue(t, caCert, caKey, "etcd", true)
	writePEM(t, filepath.Join(dir, "server.crt"), "CERTIFICATE", srvDER)
	writePEM(t, filepath.Join(dir, "server.key"), "EC PRIVATE KEY", srvKey)
	cliDER, cliKey := issue(t, caCert, caKey, "meshplane", false)
	writePEM(t, filepath.Join(etcdDir, "tls.crt"), "CERTIFICATE", cliDER)
	writePEM(t, filepath.Join(etcdDir, "tls.key"), "EC PRIVATE KEY", cliKey)
	ports, err := process.FreePorts(3)
	if err != nil {
		t.Fatal(err)
	}
	clientURL := fmt.Sprintf("https://127.0.0.1:%d", ports[0])
	peerURL := fmt.Sprintf("https://127.0.0.1:%d", ports[1])
	memberBin, err := framework.Binary("etcd-member", "core", "./test/e2e/etcdcluster/member")
	if err != nil {
		t.Fatal(err)
	}
	var etcdLogs bytes.Buffer
	etcdCmd := exec.Command(memberBin, "--name", "m0", "--data-dir", filepath.Join(dir, "etcd-data"), "--client-url", clientURL,
		"--peer-url", peerURL, "--initial-cluster", "m0="+peerURL, "--cert-file", filepath.Join(dir, "server.crt"),
		"--key-file", filepath.Join(dir, "server.key"), "--trusted-ca-file", filepath.Join(etcdDir, "ca.crt"))
	etcdCmd.Stdout, etcdCmd.Stderr = &etcdLogs, &etcdLogs
	member, err := process.StartProcess(etcdCmd)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = member.Stop(30 * time.Second)
		if t.Failed() {
			t.Logf("etcd log:\n%s", tail(etcdLogs.String(), 20))
		}
	})

	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	// startCore runs the rendered core on a fresh root directory.
	startCore := func() (*process.Process, string) {
		rootDir := t.TempDir()
		for f, b := range map[string][]byte{"ca.crt": pki["ca.crt"], "ca.key": pki["ca.key"], "admin-tokens": pki["admin-tokens"],
			"service-account.key": pki["service-account.key"], "apiserver.crt": pki["serving-root.crt"], "apiserver.key": pki["serving-root.key"]} {
			if err := os.WriteFile(filepath.Join(rootDir, f), b, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		listen := "127.0.0.1:" + strconv.Itoa(ports[2])
		var args []string
		for _, a := range sts.Spec.Template.Spec.Containers[0].Args {
			switch {
			case strings.HasPrefix(a, "--authorization-webhook-"):
				continue
			case strings.HasPrefix(a, "--root-directory="):
				a = "--root-directory=" + rootDir
			case strings.HasPrefix(a, "--bind-address="):
				a = "--bind-address=127.0.0.1"
			case strings.HasPrefix(a, "--secure-port="):
				a = "--secure-port=" + strconv.Itoa(ports[2])
			case strings.HasPrefix(a, "--external-hostname="):
				a = "--external-hostname=" + listen
			case strings.HasPrefix(a, "--shard-base-url="):
				a = "--shard-base-url=https://" + listen
			case strings.HasPrefix(a, "--etcd-servers="):
				a = "--etcd-servers=" + clientURL
			}
			args = append(args, strings.ReplaceAll(a, "/etc/meshplane/etcd", etcdDir))
		}
		bin, err := framework.MeshplaneBinary()
		if err != nil {
			t.Fatal(err)
		}
		p := startLogged(t, "core", exec.Command(bin, args...), 25)
		if _, err := process.WaitReady(ctx, "https://"+listen+"/readyz", 250*time.Millisecond, p.Exited()); err != nil {
			t.Fatalf("the core on the external etcd: %v", err)
		}
		return p, rootDir
	}
	core, rootDir := startCore()
	if _, err := os.Stat(filepath.Join(rootDir, "etcd-pki")); err == nil {
		t.Error("the core made an embedded etcd's PKI although the chart names an external etcd")
	}
	cs := rootClient(t, filepath.Join(rootDir, "admin.kubeconfig"))
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "kept-in-etcd"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := core.Stop(30 * time.Second); err != nil {
		t.Fatal(err)
	}
	_, rootDir = startCore()
	if _, err := rootClient(t, filepath.Join(rootDir, "admin.kubeconfig")).CoreV1().Namespaces().Get(ctx, "kept-in-etcd", metav1.GetOptions{}); err != nil {
		t.Errorf("a core on an empty root directory lost the namespace the external etcd holds: %v", err)
	}
}

// rootClient is a client of the root workspace with a core's admin kubeconfig.
func rootClient(t *testing.T, kubeconfig string) kubernetes.Interface {
	t.Helper()
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(&clientcmd.ClientConfigLoadingRules{ExplicitPath: kubeconfig},
		&clientcmd.ConfigOverrides{CurrentContext: "root"}).ClientConfig()
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

func newCA(t *testing.T) (*x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "etcd-ca"}, IsCA: true, BasicConstraintsValid: true,
		NotBefore: time.Now().Add(-time.Minute), NotAfter: time.Now().Add(time.Hour), KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return cert, key
}

// issue signs a certificate for cn: serving on 127.0.0.1 (and client, as
// etcd peers need) or client only. It returns the DER and the key's DER.
func issue(t *testing.T, ca *x509.Certificate, caKey *ecdsa.PrivateKey, cn string, serving bool) ([]byte, []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Minute), NotAfter: time.Now().Add(time.Hour), KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	if serving {
		tmpl.ExtKeyUsage = append(tmpl.ExtKeyUsage, x509.ExtKeyUsageServerAuth)
		tmpl.IPAddresses = []net.IP{net.ParseIP("127.0.0.1")}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return der, kb
}

func writePEM(t *testing.T, path, typ string, der []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}
