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
	shard, fp, ps := setup(t, "--mount-ca-file", caFile)

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
}
