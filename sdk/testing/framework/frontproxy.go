package framework

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/meshplane/meshplane/sdk/kubeconfig"
	"github.com/meshplane/meshplane/sdk/process"
	"github.com/meshplane/meshplane/sdk/testing/pki"
)

// FrontProxyName is the common name of the front proxy's client
// certificate, the one name shards accept identity headers from.
const FrontProxyName = "meshplane-front-proxy"

// ProxyPKI are the certificates of a sharded setup's front proxy: the CA
// shards trust for identity headers (RequestHeaderCA) and the proxy's
// certificate from it, the proxy's serving certificate, and the CA of the
// client certificates the proxy accepts (ClientCA).
type ProxyPKI struct {
	Dir string
	// URL is where StartFrontProxy will serve (its port is reserved now,
	// so that shards can be told their external URL before it runs).
	URL                       string
	port                      int
	RequestHeaderCA, ClientCA *pki.CA
	ServingCA                 *pki.CA
	ProxyClient, Serving      pki.Pair
}

// NewProxyPKI creates the certificates in a temporary directory removed
// when the test ends.
func NewProxyPKI(t testing.TB) *ProxyPKI {
	t.Helper()
	dir := t.TempDir()
	ports, err := process.FreePorts(1)
	if err != nil {
		t.Fatal(err)
	}
	p := &ProxyPKI{Dir: dir, port: ports[0], URL: fmt.Sprintf("https://127.0.0.1:%d", ports[0])}
	must := func(e error) {
		if e != nil {
			t.Fatalf("front proxy certificates: %v", e)
		}
	}
	p.RequestHeaderCA, err = pki.NewCA(dir, "requestheader-ca")
	must(err)
	p.ClientCA, err = pki.NewCA(dir, "client-ca")
	must(err)
	p.ServingCA, err = pki.NewCA(dir, "serving-ca")
	must(err)
	p.ProxyClient, err = p.RequestHeaderCA.Client("proxy-client", FrontProxyName)
	must(err)
	p.Serving, err = p.ServingCA.Server("serving", "127.0.0.1", "localhost")
	must(err)
	return p
}

// ShardArgs are the `meshplane start` flags that make a shard believe the
// proxy's identity headers.
func (p *ProxyPKI) ShardArgs() []string {
	return []string{"--requestheader-client-ca-file", p.RequestHeaderCA.CertFile, "--requestheader-allowed-names", FrontProxyName}
}

// FrontProxy is a front-proxy process started by the kit.
type FrontProxy struct {
	// URL is https://127.0.0.1:<port>.
	URL string
	// Kubeconfig is the root shard's admin kubeconfig with every server
	// moved to the proxy (same paths and credentials).
	Kubeconfig string
	LogPath    string
	PKI        *ProxyPKI
	proc       *process.Process
	bin        string
	args       []string
	log        *os.File
}

// StartFrontProxy starts bin/front-proxy in front of root (the root
// shard, started with p.ShardArgs()) and waits until its index is filled.
// It is stopped when the test ends. extraArgs go to the proxy.
func StartFrontProxy(t testing.TB, p *ProxyPKI, root *Server, extraArgs ...string) *FrontProxy {
	t.Helper()
	bin, err := Binary("front-proxy", "proxy", "./cmd/front-proxy")
	if err != nil {
		t.Fatalf("front-proxy binary: %v", err)
	}
	fp := &FrontProxy{URL: p.URL, PKI: p,
		Kubeconfig: filepath.Join(p.Dir, "front-proxy.kubeconfig"), LogPath: filepath.Join(p.Dir, "front-proxy.log")}
	if err := fp.writeKubeconfig(root.Kubeconfig); err != nil {
		t.Fatalf("front proxy kubeconfig: %v", err)
	}
	// The proxy watches every cluster: it needs the shard admin.
	watchKubeconfig := filepath.Join(p.Dir, "front-proxy-watch.kubeconfig")
	if err := kubeconfig.WithContext(root.Kubeconfig, "shard-base", watchKubeconfig); err != nil {
		t.Fatalf("front proxy watch kubeconfig: %v", err)
	}
	args := append([]string{"--secure-port", fmt.Sprint(p.port),
		"--tls-cert-file", p.Serving.CertFile, "--tls-private-key-file", p.Serving.KeyFile,
		"--client-ca-file", p.ClientCA.CertFile,
		"--proxy-client-cert-file", p.ProxyClient.CertFile, "--proxy-client-key-file", p.ProxyClient.KeyFile,
		"--root-kubeconfig", watchKubeconfig}, extraArgs...)
	if fp.log, err = os.Create(fp.LogPath); err != nil {
		t.Fatal(err)
	}
	fp.bin, fp.args = bin, args
	t.Cleanup(func() {
		if err := fp.proc.Stop(10 * time.Second); err != nil {
			t.Errorf("stopping front-proxy: %v", err)
		}
		fp.log.Close()
		if t.Failed() {
			b, _ := os.ReadFile(fp.LogPath)
			t.Logf("front-proxy log:\n%s", b)
		}
	})
	fp.start(t)
	return fp
}

// start runs the proxy process and waits until its index is filled.
func (fp *FrontProxy) start(t testing.TB) {
	t.Helper()
	cmd := exec.Command(fp.bin, fp.args...)
	cmd.Stdout, cmd.Stderr = fp.log, fp.log
	var err error
	if fp.proc, err = process.StartProcess(cmd); err != nil {
		t.Fatalf("starting front-proxy: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := process.WaitReady(ctx, fp.URL+"/readyz", 100*time.Millisecond, fp.proc.Exited()); err != nil {
		b, _ := os.ReadFile(fp.LogPath)
		t.Fatalf("front-proxy: %v\n%s", err, b)
	}
}

// Restart stops the proxy and starts it again on the same port: its
// index is rebuilt from the shards' objects.
func (fp *FrontProxy) Restart(t testing.TB) {
	t.Helper()
	if err := fp.proc.Stop(10 * time.Second); err != nil {
		t.Fatalf("stopping front-proxy: %v", err)
	}
	fp.start(t)
}

// Server returns the kit's view of the platform through the proxy: its
// clients and kubectl use Kubeconfig. Cleaned up when the test ends.
func (fp *FrontProxy) Server(t testing.TB) *Server {
	t.Helper()
	s, err := Connect(fp.Kubeconfig, fp.URL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Cleanup(false) })
	return s
}

// writeKubeconfig copies the admin kubeconfig with every server on the
// proxy, trusting the proxy's serving CA.
func (fp *FrontProxy) writeKubeconfig(admin string) error {
	ca, err := os.ReadFile(fp.PKI.ServingCA.CertFile)
	if err != nil {
		return err
	}
	return kubeconfig.Rehosted(admin, fp.URL, ca, fp.Kubeconfig)
}
