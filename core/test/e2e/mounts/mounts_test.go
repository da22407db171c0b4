package mounts

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// workspaceState reads phase, spec.URL, spec.cluster and the
// WorkspaceMountReady condition (status/reason) of a Workspace.
func workspaceState(t *testing.T, k *framework.Kubectl, name string) (phase, url, cluster, cond string) {
	t.Helper()
	out, _, err := k.RunErr(t, "get", "workspace", name, "-o",
		`jsonpath={.status.phase}|{.spec.URL}|{.spec.cluster}|{.status.conditions[?(@.type=="WorkspaceMountReady")].status}/{.status.conditions[?(@.type=="WorkspaceMountReady")].reason}`)
	if err != nil {
		return "", "", "", err.Error()
	}
	parts := strings.SplitN(out, "|", 4)
	for len(parts) < 4 {
		parts = append(parts, "")
	}
	return parts[0], parts[1], parts[2], parts[3]
}

func waitWorkspace(t *testing.T, k *framework.Kubectl, name, wantPhase, wantCond string) {
	t.Helper()
	framework.Eventually(t, 30*time.Second, 100*time.Millisecond, fmt.Sprintf("workspace %s in phase %s with WorkspaceMountReady %s", name, wantPhase, wantCond),
		func() (bool, string) {
			phase, url, cluster, cond := workspaceState(t, k, name)
			return phase == wantPhase && cond == wantCond, fmt.Sprintf("phase=%q URL=%q cluster=%q WorkspaceMountReady=%q", phase, url, cluster, cond)
		})
}

// TestMountedWorkspace drives a mounted workspace through its life with
// kubectl: unavailable (503) until the mount object is Ready, proxied
// (list, get, watch) while it is, unavailable again when it is not, and
// gone with its mount object; the ref stays immutable and no logical
// cluster ever exists for it.
func TestMountedWorkspace(t *testing.T) {
	t.Parallel()
	s := server(t)
	org := s.CreateOrg(t, "mounts")
	target := s.CreateWorkspaces(t, org.Path, "target")[0]
	inTarget := s.KubectlFor(target.Path)
	inTarget.Run(t, "create", "configmap", "remote-config", "-n", "default", "--from-literal=where=target")

	inOrg := s.KubectlFor(org.Path)
	framework.InstallMountpointCRD(t, inOrg)
	mounted := org.Path + ":remote"
	through := s.KubectlFor(mounted)

	// A Workspace that mounts an object not there yet.
	inOrg.RunStdin(t, framework.MountedWorkspace("remote", "mp"), "create", "-f", "-")
	waitWorkspace(t, inOrg, "remote", "Unavailable", "False/MountObjectNotFound")

	// The mount object, not Ready yet: still unavailable, and requests get
	// a 503 that says why.
	inOrg.RunStdin(t, framework.Mountpoint("mp"), "create", "-f", "-")
	ms := startMountServer(t, s, target.Path)
	framework.SetMountpointStatus(t, inOrg, "mp", "Connecting", ms.URL)
	waitWorkspace(t, inOrg, "remote", "Unavailable", "False/MountObjectNotReady")
	_, errOut, err := through.RunErr(t, "get", "configmaps", "-n", "default")
	if err == nil || !strings.Contains(errOut, "ServiceUnavailable") {
		t.Fatalf("kubectl get through a mount that is Connecting: want ServiceUnavailable, got err=%v stderr=%s", err, errOut)
	}
	resp := s.AdminRequest(t, http.MethodGet, "/clusters/"+mounted+"/api/v1/namespaces/default/configmaps", nil)
	if resp.Code != http.StatusServiceUnavailable {
		t.Fatalf("GET through a mount that is not Ready: status %d, want 503: %s", resp.Code, resp)
	}
	if st := resp.Status(t); st.Reason != "ServiceUnavailable" || !strings.Contains(st.Message, mounted) || !strings.Contains(st.Message, "Connecting") {
		t.Errorf("503 Status: reason %q message %q, want ServiceUnavailable naming %s and the mount's phase Connecting", st.Reason, st.Message, mounted)
	}

	// Ready: the Workspace follows, spec.URL is the mount's URL, and
	// kubectl works through the mount.
	framework.SetMountpointStatus(t, inOrg, "mp", "Ready", ms.URL)
	waitWorkspace(t, inOrg, "remote", "Ready", "True/")
	phase, url, cluster, _ := workspaceState(t, inOrg, "remote")
	if url != ms.URL || cluster != "" {
		t.Errorf("mounted workspace (phase %s): spec.URL=%q spec.cluster=%q, want the mount URL %q and no cluster", phase, url, cluster, ms.URL)
	}
	var out string
	framework.Eventually(t, 30*time.Second, 200*time.Millisecond, "a list through the mount", func() (bool, string) {
		o, e, err := through.RunErr(t, "get", "configmaps", "-n", "default", "-o", "name")
		out = o
		return err == nil, e
	})
	if !strings.Contains(out, "configmap/remote-config") {
		t.Fatalf("kubectl get configmaps through the mount: want the target's remote-config, got:\n%s", out)
	}
	if got := through.Run(t, "get", "configmap", "remote-config", "-n", "default", "-o", "jsonpath={.data.where}"); got != "target" {
		t.Errorf("kubectl get configmap through the mount: data.where=%q, want target", got)
	}
	watch := through.Background(t, time.Minute, "get", "configmaps", "-n", "default", "--watch", "-o", "name")
	watch.WaitFor(t, 30*time.Second, "the watch's initial list", func(o string) bool { return strings.Contains(o, "configmap/remote-config") })
	inTarget.Run(t, "create", "configmap", "made-later", "-n", "default")
	watch.WaitFor(t, 30*time.Second, "a watch event through the mount", func(o string) bool { return strings.Contains(o, "configmap/made-later") })
	watch.Stop()
	// Writes go through too.
	through.Run(t, "create", "configmap", "made-through-mount", "-n", "default")
	inTarget.Run(t, "get", "configmap", "made-through-mount", "-n", "default")

	users, authz, clients, mountHeaders := ms.seen()
	wantMount := mounted + " " + org.Cluster + " test.mounts.meshplane.io/Mountpoint/mp"
	for i := range users {
		if mountHeaders[i] != wantMount {
			t.Fatalf("request %d reached the mount server with mount headers %q, want %q", i, mountHeaders[i], wantMount)
		}
		if users[i] == "" || authz[i] != "" {
			t.Fatalf("request %d reached the mount server with X-Remote-User=%q Authorization=%q: want the caller's name and no credentials", i, users[i], authz[i])
		}
		if clients[i] != "system:meshplane:mount-proxy" {
			t.Fatalf("request %d came with client certificate %q, want the core's mount client certificate", i, clients[i])
		}
	}

	// No logical cluster exists for a mounted workspace.
	lcs := s.KubectlFor("*").Run(t, "get", "logicalclusters", "-o", `jsonpath={range .items[*]}{.metadata.annotations.kcp\.io/path}{"\n"}{end}`)
	for _, p := range strings.Split(lcs, "\n") {
		if p == mounted {
			t.Fatalf("a LogicalCluster exists for the mounted workspace %s", mounted)
		}
	}

	// The ref is immutable.
	_, errOut, err = inOrg.RunErr(t, "patch", "workspace", "remote", "--type=merge", "-p", `{"spec":{"mount":{"ref":{"name":"other"}}}}`)
	if err == nil || !strings.Contains(errOut, "immutable") {
		t.Errorf("changing spec.mount.ref: want an immutable error, got err=%v stderr=%s", err, errOut)
	}
	_, errOut, err = inOrg.RunErr(t, "patch", "workspace", "remote", "--type=json", "-p", `[{"op":"remove","path":"/spec/mount"}]`)
	if err == nil || !strings.Contains(errOut, "immutable") {
		t.Errorf("removing spec.mount: want an immutable error, got err=%v stderr=%s", err, errOut)
	}

	// Not Ready again: unavailable, 503.
	framework.SetMountpointStatus(t, inOrg, "mp", "Unknown", ms.URL)
	waitWorkspace(t, inOrg, "remote", "Unavailable", "False/MountObjectNotReady")
	if resp := s.AdminRequest(t, http.MethodGet, "/clusters/"+mounted+"/api/v1/namespaces", nil); resp.Code != http.StatusServiceUnavailable {
		t.Errorf("GET through a mount in phase Unknown: status %d, want 503", resp.Code)
	}

	// Without the annotation an object is no mount.
	framework.SetMountpointStatus(t, inOrg, "mp", "Ready", ms.URL)
	waitWorkspace(t, inOrg, "remote", "Ready", "True/")
	inOrg.Run(t, "annotate", "mountpoints.test.mounts.meshplane.io", "mp", "experimental.tenancy.kcp.io/is-mount-")
	waitWorkspace(t, inOrg, "remote", "Unavailable", "False/MountAnnotationInvalid")

	// The mount object goes: so does the mount.
	inOrg.Run(t, "delete", "mountpoints.test.mounts.meshplane.io", "mp")
	waitWorkspace(t, inOrg, "remote", "Unavailable", "False/MountObjectNotFound")

	// Requests to mounts are counted on /metrics.
	metrics := string(s.AdminRequest(t, http.MethodGet, "/metrics", nil).Body)
	for _, want := range []string{`meshplane_mount_requests_total{code="200"}`, `meshplane_mount_requests_total{code="503"}`, "meshplane_mount_request_duration_seconds_bucket"} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}

	// The mounted workspace can be deleted.
	inOrg.Run(t, "delete", "workspace", "remote", "--wait=true", "--timeout=30s")
}

// TestMountAuthorization: a request to a mounted workspace must be
// authorized in its parent (verb access on workspaces/content named after
// the mounted workspace), whatever the mount server would allow.
func TestMountAuthorization(t *testing.T) {
	t.Parallel()
	s := server(t)
	org := s.CreateOrg(t, "mountauthz")
	target := s.CreateWorkspaces(t, org.Path, "target")[0]
	inOrg := s.KubectlFor(org.Path)
	framework.InstallMountpointCRD(t, inOrg)
	ms := startMountServer(t, s, target.Path)
	inOrg.RunStdin(t, framework.Mountpoint("mp"), "create", "-f", "-")
	framework.SetMountpointStatus(t, inOrg, "mp", "Ready", ms.URL)
	inOrg.RunStdin(t, framework.MountedWorkspace("remote", "mp"), "create", "-f", "-")
	waitWorkspace(t, inOrg, "remote", "Ready", "True/")
	mounted := org.Path + ":remote"

	bob := s.KubectlAsUser(t, "bob", mounted)
	_, errOut, err := bob.RunErr(t, "get", "namespaces")
	if err == nil || !strings.Contains(errOut, "Forbidden") && !strings.Contains(errOut, "forbidden") {
		t.Fatalf("bob without rights in %s listed namespaces through the mount: err=%v stderr=%s", org.Path, err, errOut)
	}
	inOrg.RunStdin(t, `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: remote-access}
rules:
- apiGroups: [tenancy.kcp.io]
  resources: [workspaces/content]
  resourceNames: [remote]
  verbs: [access]
- nonResourceURLs: ["/"]
  verbs: [access]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: bob-remote-access}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: remote-access}
subjects:
- {apiGroup: rbac.authorization.k8s.io, kind: User, name: bob}
`, "apply", "-f", "-")
	framework.Eventually(t, 30*time.Second, 200*time.Millisecond, "bob to list namespaces through the mount", func() (bool, string) {
		_, errOut, err := bob.RunErr(t, "get", "namespaces")
		return err == nil, errOut
	})
	users, _, _, _ := ms.seen()
	if users[len(users)-1] != "bob" {
		t.Errorf("the mount server was told the caller is %q, want bob", users[len(users)-1])
	}
}

// TestMountValidation: a mount reference needs apiVersion, kind and name.
func TestMountValidation(t *testing.T) {
	t.Parallel()
	s := server(t)
	org := s.CreateOrg(t, "mountinvalid")
	_, errOut, err := s.KubectlFor(org.Path).RunStdinErr(t, `apiVersion: tenancy.kcp.io/v1alpha1
kind: Workspace
metadata: {name: broken}
spec: {mount: {ref: {apiVersion: v1, name: x}}}
`, "create", "-f", "-")
	if err == nil || !strings.Contains(errOut, "spec.mount.ref.kind") {
		t.Fatalf("a mount ref without kind: want an Invalid error naming spec.mount.ref.kind, got err=%v stderr=%s", err, errOut)
	}
}
