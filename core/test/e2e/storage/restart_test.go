package storage

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// TestRestartKeepsEveryCluster restarts a server holding same-named objects
// in several logical clusters and a workspace: after the restart every
// cluster still lists its own objects (the watch cache must not collapse
// them by namespace/name) and workspace paths still resolve. It guards
// core/cmd/meshplane turning off KUBE_FEATURE_WatchListClient: streamed
// initial lists land in a namespace/name store and collapse the clusters.
func TestRestartKeepsEveryCluster(t *testing.T) {
	s := framework.StartServer(t) // dedicated: this test restarts its server
	var names []string
	for i := 0; i < 3; i++ {
		c := framework.UniqueName(fmt.Sprintf("e2e-restart-%d", i))
		names = append(names, c)
		framework.RequireCode(t, s.AdminRequest(t, "POST", "/clusters/"+c+"/api/v1/namespaces", framework.NamespaceJSON(t, "same")), "creating namespace same in "+c, 201)
	}
	ws := framework.UniqueName("restart-ws")
	body := []byte(`{"apiVersion":"tenancy.kcp.io/v1alpha1","kind":"Workspace","metadata":{"name":"` + ws + `"}}`)
	framework.RequireCode(t, s.AdminRequest(t, "POST", "/clusters/root/apis/tenancy.kcp.io/v1alpha1/workspaces", body), "creating a workspace", 201)
	framework.Eventually(t, 30*time.Second, 200*time.Millisecond, "workspace "+ws+" to be Ready", func() (bool, string) {
		r := s.AdminRequest(t, "GET", "/clusters/root/apis/tenancy.kcp.io/v1alpha1/workspaces/"+ws, nil)
		return strings.Contains(r.String(), `"phase":"Ready"`), r.String()
	})

	if err := s.Restart(); err != nil {
		t.Fatalf("restarting: %v", err)
	}

	for _, c := range names {
		r := s.AdminRequest(t, "GET", "/clusters/"+c+"/api/v1/namespaces", nil)
		var list struct {
			Items []struct {
				Metadata struct{ Name string } `json:"metadata"`
			} `json:"items"`
		}
		r.JSON(t, &list)
		if len(list.Items) != 1 || list.Items[0].Metadata.Name != "same" {
			t.Errorf("after restart, cluster %s lists %+v, want exactly namespace same", c, list.Items)
		}
	}
	r := s.AdminRequest(t, "GET", "/clusters/*/api/v1/namespaces", nil)
	var all map[string]any
	if err := json.Unmarshal(r.Body, &all); err != nil {
		t.Fatalf("wildcard list: %v: %s", err, r.String())
	}
	for _, c := range names {
		if !strings.Contains(r.String(), `"kcp.io/cluster":"`+c+`"`) {
			t.Errorf("after restart, the wildcard list lacks cluster %s", c)
		}
	}
	framework.RequireCode(t, s.AdminRequest(t, "GET", "/clusters/root:"+ws+"/api/v1/namespaces", nil), "listing in root:"+ws+" after restart", 200)
}
