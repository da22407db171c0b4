package mounts

import (
	"strings"
	"testing"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// TestMountsGateOff: with --feature-gates WorkspaceMounts=false (kcp's
// gate; on by default here) a Workspace with a mount is refused.
func TestMountsGateOff(t *testing.T) {
	t.Parallel()
	s := framework.StartServer(t, framework.WithExtraArgs("--feature-gates", "WorkspaceMounts=false"))
	_, errOut, err := s.KubectlFor("root").RunStdinErr(t, framework.MountedWorkspace("remote", "mp"), "create", "-f", "-")
	if err == nil || !strings.Contains(errOut, "WorkspaceMounts=false") {
		t.Fatalf("creating a mounted workspace with the gate off: want Forbidden naming the gate, got err=%v stderr=%s", err, errOut)
	}
	// Plain workspaces are unaffected.
	s.CreateWorkspaces(t, "root", "plain")
}
