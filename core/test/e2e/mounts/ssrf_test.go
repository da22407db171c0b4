package mounts

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// TestMountCannotReachInternalAddresses plays the tenant who points a
// mount object at the platform's own services (issue 28, takeover 5):
// anyone who writes objects in a workspace may write a mount object's
// status.URL. The core connects only to --mount-allowed-hosts (here the
// test mount servers' addresses), so a mount at an internal HTTP API on
// loopback (as OpenFGA's), the embedded etcd, the core itself, loopback
// by name or the link-local metadata address gets 503 and never reaches
// it, and every failure answers the same message, so a mount tells open
// ports from closed ones no better than allowed from refused.
func TestMountCannotReachInternalAddresses(t *testing.T) {
	framework.SkipIfExternal(t, "needs the server's --mount-allowed-hosts and its etcd port")
	t.Parallel()
	s := server(t)
	org := s.CreateOrg(t, "mountssrf")
	target := s.CreateWorkspaces(t, org.Path, "target")[0]
	inOrg := s.KubectlFor(org.Path)
	framework.InstallMountpointCRD(t, inOrg)

	// An internal API without authentication, as OpenFGA's HTTP API.
	var reached atomic.Int64
	internal := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Success","message":"internal"}`))
	}))
	defer internal.Close()
	internalPort := internal.Listener.Addr().(*net.TCPAddr).Port
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedPort := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()

	// The allowed mount server works: the refusals below are the
	// allow-list's, not a broken mount.
	ms := startMountServer(t, s, target.Path)
	inOrg.RunStdin(t, framework.Mountpoint("allowed"), "create", "-f", "-")
	framework.SetMountpointStatus(t, inOrg, "allowed", "Ready", ms.URL)
	inOrg.RunStdin(t, framework.MountedWorkspace("allowed", "allowed"), "create", "-f", "-")
	waitWorkspace(t, inOrg, "allowed", "Ready", "True/")
	framework.Eventually(t, 30*time.Second, 200*time.Millisecond, "a request through the allowed mount", func() (bool, string) {
		resp := s.AdminRequest(t, http.MethodGet, "/clusters/"+org.Path+":allowed/api/v1/namespaces/default", nil)
		return resp.Code == http.StatusOK, resp.String()
	})

	targets := []struct{ name, url string }{
		{"internal", fmt.Sprintf("http://127.0.0.1:%d", internalPort)},
		{"internal-by-name", fmt.Sprintf("http://localhost:%d", internalPort)},
		{"internal-mapped", fmt.Sprintf("http://[::ffff:127.0.0.1]:%d", internalPort)},
		{"closed", fmt.Sprintf("http://127.0.0.1:%d", closedPort)},
		{"etcd", fmt.Sprintf("http://127.0.0.1:%d", s.EtcdClientPort)},
		{"core", fmt.Sprintf("https://127.0.0.1:%d", s.Port)},
		{"metadata", "http://169.254.169.254"},
	}
	messages := map[string]string{}
	for _, tc := range targets {
		inOrg.RunStdin(t, framework.Mountpoint(tc.name), "create", "-f", "-")
		framework.SetMountpointStatus(t, inOrg, tc.name, "Ready", tc.url)
		inOrg.RunStdin(t, framework.MountedWorkspace(tc.name, tc.name), "create", "-f", "-")
		waitWorkspace(t, inOrg, tc.name, "Ready", "True/")
		path := org.Path + ":" + tc.name
		for _, p := range []string{"/version", "/stores", "/api/v1/namespaces"} {
			resp := s.AdminRequest(t, http.MethodGet, "/clusters/"+path+p, nil)
			if resp.Code != http.StatusServiceUnavailable {
				t.Fatalf("GET %s through a mount at %s (%s): status %d, want 503: %s", p, tc.url, tc.name, resp.Code, resp)
			}
			st := resp.Status(t)
			messages[tc.name] = strings.ReplaceAll(st.Message, path, "<workspace>")
		}
	}
	if n := reached.Load(); n != 0 {
		t.Errorf("the internal service was reached %d times through mounts", n)
	}
	want := "workspace <workspace> is a mount that is not ready: its mount server is not reachable"
	for name, msg := range messages {
		if msg != want {
			t.Errorf("mount %s answered %q, want the one message %q for every destination", name, msg, want)
		}
	}
}
