package framework

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"
)

// MountpointCRD is a mount type for tests: a cluster-scoped kind
// (mountpoints.test.mounts.meshplane.io) with status.URL and status.phase,
// which is all a mount object needs (see docs/mounts.md).
const MountpointCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: mountpoints.test.mounts.meshplane.io
spec:
  group: test.mounts.meshplane.io
  names: {kind: Mountpoint, plural: mountpoints, singular: mountpoint}
  scope: Cluster
  versions:
  - name: v1alpha1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, x-kubernetes-preserve-unknown-fields: true}
          status:
            type: object
            properties:
              URL: {type: string}
              phase: {type: string}
`

// InstallMountpointCRD applies MountpointCRD with k and waits until it is
// served.
func InstallMountpointCRD(t *testing.T, k *Kubectl) {
	t.Helper()
	k.RunStdin(t, MountpointCRD, "apply", "-f", "-")
	Eventually(t, 30*time.Second, 200*time.Millisecond, "the Mountpoint CRD to be served", func() (bool, string) {
		_, errOut, err := k.RunErr(t, "get", "mountpoints.test.mounts.meshplane.io")
		return err == nil, errOut
	})
}

// Mountpoint is a Mountpoint manifest marked as a mount object.
func Mountpoint(name string) string {
	return fmt.Sprintf(`apiVersion: test.mounts.meshplane.io/v1alpha1
kind: Mountpoint
metadata:
  name: %s
  annotations:
    experimental.tenancy.kcp.io/is-mount: "true"
spec: {}
`, name)
}

// MountedWorkspace is a Workspace manifest mounting Mountpoint mountName.
func MountedWorkspace(name, mountName string) string {
	return fmt.Sprintf(`apiVersion: tenancy.kcp.io/v1alpha1
kind: Workspace
metadata:
  name: %s
spec:
  mount:
    ref:
      apiVersion: test.mounts.meshplane.io/v1alpha1
      kind: Mountpoint
      name: %s
`, name, mountName)
}

// SetMountpointStatus writes a Mountpoint's status as a mount controller
// would.
func SetMountpointStatus(t *testing.T, k *Kubectl, name, phase, url string) {
	t.Helper()
	patch, _ := json.Marshal(map[string]any{"status": map[string]any{"phase": phase, "URL": url}})
	k.Run(t, "patch", "mountpoints.test.mounts.meshplane.io", name, "--subresource=status", "--type=merge", "-p", string(patch))
}
