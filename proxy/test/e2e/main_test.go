// Package e2e tests the front proxy with a real core and the real
// kubectl: routing by workspace path, kubectl ws through the proxy,
// identity forwarding (client certificates and bearer tokens) and the
// headers a client must not be able to forge.
package e2e

import (
	"os"
	"testing"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

func TestMain(m *testing.M) {
	code := m.Run()
	framework.CleanupBinaries()
	os.Exit(code)
}
