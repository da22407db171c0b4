package e2e

import (
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/meshplane/meshplane/sdk/process"
	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// mountsBinary is bin/kubecluster-mounts (built when missing).
func mountsBinary(t *testing.T) string {
	t.Helper()
	bin, err := framework.Binary("kubecluster-mounts", "examples/mounts", "./cmd/kubecluster-mounts")
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// startMounts runs kubecluster-mounts for the KubeClusters of the
// workspace kubeconfig points at, trusting the core's CA for clients and
// allowing targets at targets only, and returns the base URL of its
// health and metrics endpoints once /readyz answers.
func startMounts(t *testing.T, s *framework.Server, kubeconfig, targets string) string {
	t.Helper()
	ports, err := process.FreePorts(1)
	if err != nil {
		t.Fatal(err)
	}
	log := &process.Buffer{}
	cmd := exec.Command(mountsBinary(t), "--kubeconfig", kubeconfig, "--listen-address", "127.0.0.1:"+strconv.Itoa(proxyPort),
		"--client-ca-file", filepath.Join(s.RootDir, "ca.crt"), "--cert-dir", certDir, "--recheck-interval", "1s", "-v", "4",
		"--health-address", "127.0.0.1:"+strconv.Itoa(ports[0]), "--target-allowed-hosts", targets)
	cmd.Stdout, cmd.Stderr = log, log
	p, err := process.StartProcess(cmd)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = p.Stop(5 * time.Second)
		if t.Failed() {
			t.Logf("kubecluster-mounts log:\n%s", log.String())
		}
	})
	health := "http://127.0.0.1:" + strconv.Itoa(ports[0])
	framework.Eventually(t, 30*time.Second, 100*time.Millisecond, "kubecluster-mounts to be ready", func() (bool, string) {
		if _, err := os.Stat(filepath.Join(certDir, "serving.crt")); err != nil {
			return false, log.String()
		}
		resp, err := http.Get(health + "/readyz")
		if err != nil {
			return false, err.Error()
		}
		_ = resp.Body.Close()
		return resp.StatusCode == http.StatusOK, resp.Status
	})
	return health
}
