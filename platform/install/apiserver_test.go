package install

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
)

// kubeAPIServerVersion is the Kubernetes release the test cluster kit
// builds (tools/kubernetes, scripts/build-kubernetes.sh).
const kubeAPIServerVersion = "v1.34.4"

// kubeAPIServerBin is KUBE_APISERVER_BIN, else the kit's build cache.
func kubeAPIServerBin() string {
	if b := os.Getenv("KUBE_APISERVER_BIN"); b != "" {
		return b
	}
	cache := os.Getenv("MESHPLANE_CACHE")
	if cache == "" {
		home, _ := os.UserHomeDir()
		cache = filepath.Join(home, ".cache", "meshplane")
	}
	return filepath.Join(cache, "kubernetes", kubeAPIServerVersion, "kube-apiserver")
}

// startKubeAPIServer runs a real kube-apiserver on an embedded etcd, no
// controller manager and no kubelet: objects are stored and validated,
// nothing reconciles them (Deployments get no pods). It returns a
// kubeconfig of an admin (system:masters) with current context "test".
func startKubeAPIServer(t *testing.T) string {
	t.Helper()
	bin := kubeAPIServerBin()
	if _, err := os.Stat(bin); err != nil {
		t.Skipf("kube-apiserver not built at %s (scripts/build-kubernetes.sh builds it, or set KUBE_APISERVER_BIN): %v", bin, err)
	}
	dir := t.TempDir()
	etcdURL := startEtcd(t, filepath.Join(dir, "etcd"))

	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	saKey := filepath.Join(dir, "sa.key")
	writeFile(t, saKey, pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}))
	const token = "install-test-admin"
	tokens := filepath.Join(dir, "tokens.csv")
	writeFile(t, tokens, []byte(token+`,admin,admin,"system:masters"`+"\n"))

	port := freePort(t)
	cmd := exec.Command(bin,
		"--etcd-servers="+etcdURL,
		"--bind-address=127.0.0.1", "--advertise-address=127.0.0.1",
		"--secure-port="+strconv.Itoa(port),
		"--cert-dir="+filepath.Join(dir, "certs"),
		"--token-auth-file="+tokens,
		"--authorization-mode=RBAC",
		"--service-account-issuer=https://kubernetes.default.svc",
		"--service-account-key-file="+saKey,
		"--service-account-signing-key-file="+saKey,
		"--service-cluster-ip-range=10.96.0.0/16",
		"--v=0",
	)
	logFile, err := os.Create(filepath.Join(dir, "kube-apiserver.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
		logFile.Close()
	})

	server := "https://127.0.0.1:" + strconv.Itoa(port)
	hc := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		req, _ := http.NewRequest(http.MethodGet, server+"/readyz", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		if resp, err := hc.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		select {
		case <-exited:
			log, _ := os.ReadFile(logFile.Name())
			t.Fatalf("kube-apiserver exited:\n%s", tail(log, 3000))
		default:
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(logFile.Name())
			t.Fatalf("kube-apiserver not ready after 2m:\n%s", tail(log, 3000))
		}
		time.Sleep(200 * time.Millisecond)
	}
	kubeconfig := filepath.Join(dir, "kubeconfig")
	writeFile(t, kubeconfig, []byte(fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: test
  cluster:
    server: %s
    insecure-skip-tls-verify: true
users:
- name: admin
  user:
    token: %s
contexts:
- name: test
  context: {cluster: test, user: admin}
current-context: test
`, server, token)))
	return kubeconfig
}

func startEtcd(t *testing.T, dir string) string {
	t.Helper()
	client := &url.URL{Scheme: "http", Host: "127.0.0.1:" + strconv.Itoa(freePort(t))}
	peer := &url.URL{Scheme: "http", Host: "127.0.0.1:" + strconv.Itoa(freePort(t))}
	cfg := embed.NewConfig()
	cfg.Dir, cfg.LogLevel = dir, "panic" // its shutdown logs errors
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{*client}, []url.URL{*client}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{*peer}, []url.URL{*peer}
	cfg.InitialCluster = cfg.Name + "=" + peer.String()
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	select {
	case <-e.Server.ReadyNotify():
	case <-time.After(time.Minute):
		t.Fatal("embedded etcd not ready after 1m")
	}
	return client.String()
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}
