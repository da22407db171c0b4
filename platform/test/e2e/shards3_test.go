package e2e

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	"github.com/meshplane/meshplane/platform/launcher"
	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// TestLauncherThreeShards runs `make run SHARDS=3 EXAMPLES=mongodb`:
// shard c in the port range's extension, platform.env naming the three
// shards; on each shard, and on a fourth one started by hand while the
// platform runs (no component restarted), the same tenant journey
// (shardJourney: organization and account Ready there, a RoleAssignment
// making bob a member, GraphQL query and subscription, the MongoDB
// provider's reconciliation); and shard c started again after kill -9
// with its data.
func TestLauncherThreeShards(t *testing.T) {
	root := filepath.Join(t.TempDir(), "three")
	base := freeExtendedBase(t)
	repo, err := framework.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	p := startPlatform(t, root, base, "--shards", "3", "--examples", "mongodb", "--examples-dir", filepath.Join(repo, "examples"))
	env := p.waitReady(t)

	url := func(offset int) string { return fmt.Sprintf("https://127.0.0.1:%d", base+offset) }
	kubeconfig, proxy := env["KUBECONFIG"], env["FRONT_PROXY_URL"]
	framework.RequireEqual(t, kubeconfig, filepath.Join(root, "front-proxy", "admin.kubeconfig"), "platform.env KUBECONFIG")
	framework.RequireEqual(t, proxy, url(19), "platform.env FRONT_PROXY_URL")
	framework.RequireEqual(t, env["SHARD_NAMES"], "root,b,c", "platform.env SHARD_NAMES")
	framework.RequireEqual(t, env["SHARD_ROOT_URL"], url(0), "platform.env SHARD_ROOT_URL")
	framework.RequireEqual(t, env["SHARD_B_URL"], url(16), "platform.env SHARD_B_URL")
	framework.RequireEqual(t, env["SHARD_C_URL"], url(20), "platform.env SHARD_C_URL")
	ports, err := listeningPorts(p.cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	for _, port := range ports {
		if port < base || port >= base+launcher.ExtendedPortRange {
			t.Errorf("the platform listens on port %d, outside its range %d..%d (all: %v)", port, base, base+launcher.ExtendedPortRange-1, ports)
		}
	}
	if !slices.Contains(ports, base+20) {
		t.Errorf("nothing listens on shard c's port %d (all: %v)", base+20, ports)
	}
	framework.RequireEqual(t, mustKubectl(t, kubeconfig, "get", "shards", "-o", "jsonpath={.items[*].metadata.name}"), "b c root", "shards")

	// The same journey on each shard: an organization and an account,
	// a member's grant, GraphQL queries and subscriptions, the MongoDB
	// example provider's reconciliation.
	shards := []string{"root", "b", "c"}
	for _, shard := range shards {
		shardJourney(t, root, kubeconfig, env, shard, shards)
	}
	// A fourth shard added while everything runs serves new organizations
	// (nothing restarted).
	startShardByHand(t, root, env, "e")
	shards = append(shards, "e")
	shardJourney(t, root, kubeconfig, env, "e", shards)
	for _, s := range shards {
		mustKubectl(t, kubeconfig, "--context", "shard-base", "--server", proxy+"/clusters/root", "annotate", "shard", s, "experimental.core.kcp.io/unschedulable-")
	}
	orgC := []string{"--context", "alice", "--server", proxy + "/clusters/root:orgs:org-c"}

	// Shard c is supervised: killed, it is started again, with its data;
	// requests to the root shard through the proxy keep being answered.
	tokens := demoTokens(t, kubeconfig)
	ph := killAndWait(t, root, "shard-c", []probe{{name: "bob reads API discovery in root:orgs through the proxy (RBAC allows)",
		url: proxy + "/clusters/root:orgs/apis/tenancy.kcp.io/v1alpha1", token: tokens["bob"], rbacAllows: true}})
	t.Logf("shard-c: requests %d, ready again after %.1fs, RBAC-allowed refused in window %d, beyond %d",
		ph.requests, ph.readyAt.Sub(ph.killed).Seconds(), ph.failedInWindow, ph.failedBeyond)
	if ph.restartsObserved != 1 || ph.failedInWindow != 0 || ph.failedBeyond != 0 || ph.leaks != 0 {
		t.Errorf("shard c killed: %+v, want one restart and every request to the root shard answered", ph)
	}
	framework.RequireEqual(t, eventuallyKubectl(t, kubeconfig, append(orgC, "get", "accountinfo", "account", "-o", "jsonpath={.spec.organization.name}")...),
		"org-c", "org-c's AccountInfo on shard c after its restart")
	p.stop(t)
}

// freeExtendedBase finds a base whose extended range (three or four
// shards) is free.
func freeExtendedBase(t *testing.T) int {
	t.Helper()
	for range 50 {
		base := 20000 + rand.IntN(1300)*launcher.ExtendedPortRange
		if (launcher.Ports{Base: base, Shards: 3}).CheckFree() == nil {
			return base
		}
	}
	t.Fatal("no free port range found")
	return 0
}
