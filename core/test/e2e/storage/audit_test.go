package storage

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// TestAuditLog starts a server with --audit-log-path and kcp's other test
// harness flags, and finds a create in the log with its logical cluster.
func TestAuditLog(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.log")
	s := framework.StartServer(t, framework.WithExtraArgs("--audit-log-path", path,
		"--embedded-etcd-wal-size-bytes=5000", "--feature-gates=WorkspaceMounts=true"))
	cluster := framework.UniqueName("e2e-audit")
	framework.RequireCode(t, s.AdminRequest(t, "POST", "/clusters/"+cluster+"/api/v1/namespaces", framework.NamespaceJSON(t, "audited")), "creating a namespace", 201)
	framework.Eventually(t, 10*time.Second, 100*time.Millisecond, "the create in the audit log", func() (bool, string) {
		b, err := os.ReadFile(path)
		if err != nil {
			return false, err.Error()
		}
		for _, line := range strings.Split(string(b), "\n") {
			if strings.Contains(line, `"verb":"create"`) && strings.Contains(line, `"name":"audited"`) &&
				strings.Contains(line, `"kcp.io/cluster":"`+cluster+`"`) {
				return true, ""
			}
		}
		return false, "no audit event for the create of namespace audited in " + cluster
	})
}
