// Package e2e tests the example mount controller and proxy end to end:
// a KubeCluster in a workspace of one Meshplane mounts a workspace of
// another, and kubectl works through the mounted workspace.
package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/meshplane/meshplane/sdk/process"
	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// certDir is the proxy's --cert-dir: the core trusts the self-signed
// serving certificate the proxy writes there (--mount-ca-file).
var certDir string

// proxyPort is the proxy's port, chosen before the shared core starts:
// its --mount-allowed-hosts names exactly 127.0.0.1:proxyPort.
var proxyPort int

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "meshplane-mounts-example-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	certDir = filepath.Join(dir, "certs")
	ports, err := process.FreePorts(1)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	proxyPort = ports[0]
	code := framework.RunMain(m, framework.WithExtraArgs("--mount-ca-file", filepath.Join(certDir, "serving.crt"),
		"--mount-allowed-hosts", "127.0.0.1:"+strconv.Itoa(proxyPort)))
	_ = os.RemoveAll(dir)
	os.Exit(code)
}
