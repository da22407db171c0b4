package fidelity

import (
	"strings"
	"testing"
	"time"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// TestMetricsThroughWorkspacePath checks the shard-level /metrics as kcp
// serves it: through a workspace path (/clusters/<c>/metrics, root
// included) it is 501 for everybody, system:masters too; the bare URL
// serves the metrics and is authorized in root, so a ClusterRoleBinding in
// root lets a user scrape.
func TestMetricsThroughWorkspacePath(t *testing.T) {
	t.Parallel()
	s := server(t)
	org := s.CreateOrg(t, "metrics")
	admin, bob := s.AdminToken(t), s.UserToken(t, "bob")
	for _, p := range []string{"/clusters/root/metrics", "/clusters/" + org.Path + "/metrics", "/clusters/" + org.Cluster + "/metrics"} {
		for who, token := range map[string]string{"system:masters": admin, "kcp-admin": s.KCPAdminToken(t), "bob": bob} {
			res := s.Request(t, token, "GET", p, nil)
			framework.RequireCode(t, res, "GET "+p+" as "+who, 501)
			framework.RequireContains(t, string(res.Body), "shard-level endpoint not available at workspace scope", "GET "+p+" as "+who)
		}
	}

	res := s.Request(t, admin, "GET", "/metrics", nil)
	framework.RequireCode(t, res, "GET /metrics as system:masters", 200)
	if !strings.Contains(string(res.Body), "apiserver_request_total") {
		t.Errorf("GET /metrics as system:masters: no Prometheus metrics in the answer: %.300s", res.Body)
	}
	framework.RequireCode(t, s.Request(t, bob, "GET", "/metrics", nil), "GET /metrics as bob without a grant", 403)

	name := framework.UniqueName("metrics-reader")
	root := s.KubectlFor("root")
	root.Run(t, "create", "clusterrole", name, "--verb=get", "--non-resource-url=/metrics")
	root.Run(t, "create", "clusterrolebinding", name, "--clusterrole="+name, "--user=bob")
	t.Cleanup(func() {
		_, _, _ = root.RunErr(t, "delete", "clusterrolebinding", name)
		_, _, _ = root.RunErr(t, "delete", "clusterrole", name)
	})
	framework.Eventually(t, 30*time.Second, 250*time.Millisecond, "bob to scrape /metrics with a grant in root", func() (bool, string) {
		res := s.Request(t, bob, "GET", "/metrics", nil)
		return res.Code == 200, res.String()
	})
}
