// Package e2e tests the provider kit against a real core bootstrapped as
// `make run` does (the core.platform-mesh.io export in
// root:platform-mesh-system, root:orgs bound to it): the
// provider-kubeconfig CLI driven like a user runs it, and a
// multicluster-runtime manager built with the kit.
package e2e

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/meshplane/meshplane/platform/bootstrap"
	"github.com/meshplane/meshplane/sdk/testing/framework"
)

func TestMain(m *testing.M) { os.Exit(framework.RunMain(m)) }

var (
	bootOnce sync.Once
	bootErr  error
)

// platform returns the shared core with the platform bootstrap applied.
func platform(t *testing.T) *framework.Server {
	t.Helper()
	s := framework.SharedServer(t)
	if s.External {
		return s
	}
	bootOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		bootErr = bootstrap.Run(ctx, s.KCPAdminRESTConfig(t, ""))
	})
	if bootErr != nil {
		t.Fatalf("bootstrap: %v", bootErr)
	}
	return s
}
