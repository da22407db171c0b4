package fidelity

import (
	"testing"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// TestReservedMetadata checks that a user (here kcp-admin, who is no system
// component) cannot set, change or remove the annotations and labels kcp
// reserves to the system, that kcp.io/cluster stays the storage's whatever
// the request says, and that system:masters may write reserved keys.
func TestReservedMetadata(t *testing.T) {
	t.Parallel()
	s := server(t)
	name := framework.UniqueName("reserved")
	user := s.AdminKubectl() // kcp-admin in root
	user.Run(t, "create", "configmap", name, "-n", "default")
	for _, args := range [][]string{
		{"annotate", "configmap", name, "-n", "default", "internal.tenancy.kcp.io/type=root:universal"},
		{"annotate", "configmap", name, "-n", "default", "core.kcp.io/shard=other"},
		{"label", "configmap", name, "-n", "default", "tenancy.kcp.io/phase=Ready"},
	} {
		out, stderr, err := user.RunErr(t, args...)
		framework.RequireFails(t, out, stderr, err, "kubectl "+args[0]+" "+args[len(args)-1]+" as kcp-admin",
			`configmaps "`+name+`" is forbidden: modification of reserved`)
	}
	user.Run(t, "annotate", "configmap", name, "-n", "default", "--overwrite", "kcp.io/cluster=elsewhere", "example.com/free=yes")
	got := user.Run(t, "get", "configmap", name, "-n", "default", "-o", "jsonpath={.metadata.annotations.kcp\\.io/cluster}")
	framework.RequireEqual(t, got, "root", "kcp.io/cluster after a user set it")

	admin := s.KubectlFor("root") // system:masters
	admin.Run(t, "annotate", "configmap", name, "-n", "default", "internal.tenancy.kcp.io/type=root:universal")
	// Unchanged reserved keys do not stop a user's update.
	user.Run(t, "label", "configmap", name, "-n", "default", "free=yes")
	out, stderr, err := user.RunErr(t, "annotate", "configmap", name, "-n", "default", "internal.tenancy.kcp.io/type-")
	framework.RequireFails(t, out, stderr, err, "removing a reserved annotation as kcp-admin", "modification of reserved annotation")
}
