// Package mounts tests workspace mounts end to end with kubectl: a
// Workspace whose spec.mount.ref names a mount object is proxied to the
// object's status.URL while it is Ready.
package mounts

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// mountCAFile is the core's --mount-ca-file: the test's mount server
// writes its certificate there once it runs (the core re-reads it).
var mountCAFile string

// mountListeners are the addresses the test mount servers listen on,
// opened before the core starts: its --mount-allowed-hosts names exactly
// these, as a platform names its mount servers.
var (
	mountListenersMu sync.Mutex
	mountListeners   []net.Listener
)

// mountServers is how many mount servers the tests of this package start.
const mountServers = 6

// TestMain shares one server between the tests of this package; each
// test works in its own organization.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "meshplane-mounts-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	mountCAFile = filepath.Join(dir, "mount-ca.pem")
	var allowed []string
	for range mountServers {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		mountListeners = append(mountListeners, l)
		allowed = append(allowed, l.Addr().String())
	}
	code := framework.RunMain(m, framework.WithExtraArgs("--mount-ca-file", mountCAFile, "--mount-allowed-hosts", strings.Join(allowed, ",")))
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// mountListener hands out one of mountListeners.
func mountListener(t *testing.T) net.Listener {
	t.Helper()
	mountListenersMu.Lock()
	defer mountListenersMu.Unlock()
	if len(mountListeners) == 0 {
		t.Fatalf("all %d allowed mount addresses are in use: raise mountServers", mountServers)
	}
	l := mountListeners[0]
	mountListeners = mountListeners[1:]
	return l
}

func server(t *testing.T) *framework.Server {
	t.Helper()
	return framework.SharedServer(t)
}
