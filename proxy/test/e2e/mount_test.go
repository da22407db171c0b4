package e2e

import (
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// TestMountThroughProxy reaches a mounted workspace through the proxy: it
// is routed to the shard of its parent, which authorizes the request and
// proxies it to the mount's URL once the mount is Ready.
func TestMountThroughProxy(t *testing.T) {
	// The mount server: answers every request with what it was told.
	mount := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]string{"path": r.URL.Path, "user": r.Header.Get("X-Remote-User"),
			"workspace": r.Header.Get("X-Meshplane-Mount-Workspace")})
	}))
	mount.StartTLS()
	defer mount.Close()
	caFile := filepath.Join(t.TempDir(), "mount-ca.pem")
	if err := os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: mount.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	// An internal API on loopback (as OpenFGA's), which a tenant's mount
	// object may name but must not reach (issue 28, takeover 5).
	var internalHits atomic.Int64
	internal := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		internalHits.Add(1)
		_, _ = w.Write([]byte(`{"internal":true}`))
	}))
	defer internal.Close()
	shard, fp, ps := setup(t, "--mount-ca-file", caFile, "--mount-allowed-hosts", mount.Listener.Addr().String())

	org := ps.CreateOrg(t, "fpmount")
	inOrg := ps.KubectlFor(org.Path)
	framework.InstallMountpointCRD(t, inOrg)
	inOrg.RunStdin(t, framework.Mountpoint("remote"), "apply", "-f", "-")
	framework.SetMountpointStatus(t, inOrg, "remote", "Ready", mount.URL)
	inOrg.RunStdin(t, framework.MountedWorkspace("remote", "remote"), "apply", "-f", "-")

	c := client(t, fp, nil)
	token := map[string]string{"Authorization": "Bearer " + shard.AdminToken(t)}
	url := fp.URL + "/clusters/" + org.Path + ":remote/api/v1/namespaces"
	var body string
	framework.Eventually(t, 30*time.Second, 200*time.Millisecond, "the mounted workspace to answer through the proxy", func() (bool, string) {
		var code int
		code, body = get(t, c, url, token)
		return code == http.StatusOK && strings.Contains(body, `"workspace"`), fmt.Sprint(code, " ", body)
	})
	var got map[string]string
	if err := json.Unmarshal([]byte(body), &got); err != nil {
		t.Fatal(err)
	}
	framework.RequireEqual(t, got["path"], "/api/v1/namespaces", "path the mount server saw")
	framework.RequireEqual(t, got["workspace"], org.Path+":remote", "mounted workspace the mount server was told")
	framework.RequireEqual(t, got["user"], "shard-admin", "user the mount server was told")

	// alice may not use the parent: the parent's shard refuses her.
	code, out := get(t, c, url, map[string]string{"Authorization": "Bearer " + shard.UserToken(t, "alice")})
	framework.RequireEqual(t, code, http.StatusForbidden, "alice through the proxy to a mount in a workspace she cannot access: "+out)

	// A mount at the internal API and one at the shard's etcd: 503 with
	// the one message, through the proxy as on the shard, and the internal
	// API never sees a request.
	for name, target := range map[string]string{"internal": internal.URL, "etcd": fmt.Sprintf("http://127.0.0.1:%d", shard.EtcdClientPort)} {
		inOrg.RunStdin(t, framework.Mountpoint(name), "apply", "-f", "-")
		framework.SetMountpointStatus(t, inOrg, name, "Ready", target)
		inOrg.RunStdin(t, framework.MountedWorkspace(name, name), "apply", "-f", "-")
		path := org.Path + ":" + name
		framework.Eventually(t, 30*time.Second, 200*time.Millisecond, "the mount at "+name+" to be Ready", func() (bool, string) {
			phase := inOrg.Run(t, "get", "workspace", name, "-o", "jsonpath={.status.phase}")
			return phase == "Ready", phase
		})
		code, out := get(t, c, fp.URL+"/clusters/"+path+"/version", token)
		framework.RequireEqual(t, code, http.StatusServiceUnavailable, "a mount at "+name+" through the proxy: "+out)
		if want := "workspace " + path + " is a mount that is not ready: its mount server is not reachable"; !strings.Contains(out, want) {
			t.Errorf("a mount at %s through the proxy answered %s, want the message %q", name, out, want)
		}
	}
	if n := internalHits.Load(); n != 0 {
		t.Errorf("the internal API was reached %d times through a mount", n)
	}
}
