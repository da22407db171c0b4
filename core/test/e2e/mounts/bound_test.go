package mounts

import (
	"strings"
	"testing"
	"time"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// TestMountOfABoundType: the mount type may come from an APIExport (as in
// kcp's contrib example): a consumer binds it, and its objects mount
// workspaces like those of a CRD.
func TestMountOfABoundType(t *testing.T) {
	t.Parallel()
	s := server(t)
	provider := s.CreateOrg(t, "mountprovider")
	s.ExportCRD(t, provider, framework.MountpointCRD, "test.mounts.meshplane.io")
	consumer := s.CreateOrg(t, "mountconsumer")
	s.Bind(t, consumer, "mountpoints", provider, "test.mounts.meshplane.io", nil)
	target := s.CreateWorkspaces(t, consumer.Path, "target")[0]
	s.KubectlFor(target.Path).Run(t, "create", "configmap", "bound-target", "-n", "default")

	in := s.KubectlFor(consumer.Path)
	framework.Eventually(t, 30*time.Second, 200*time.Millisecond, "the bound Mountpoint resource to be served", func() (bool, string) {
		_, errOut, err := in.RunErr(t, "get", "mountpoints.test.mounts.meshplane.io")
		return err == nil, errOut
	})
	ms := startMountServer(t, s, target.Path)
	in.RunStdin(t, framework.Mountpoint("mp"), "create", "-f", "-")
	in.RunStdin(t, framework.MountedWorkspace("remote", "mp"), "create", "-f", "-")
	waitWorkspace(t, in, "remote", "Unavailable", "False/MountObjectNotReady")
	framework.SetMountpointStatus(t, in, "mp", "Ready", ms.URL)
	waitWorkspace(t, in, "remote", "Ready", "True/")
	out := s.KubectlFor(consumer.Path+":remote").Run(t, "get", "configmaps", "-n", "default", "-o", "name")
	if !strings.Contains(out, "configmap/bound-target") {
		t.Fatalf("kubectl get through a mount of a bound type lacks the target's configmap:\n%s", out)
	}
}
