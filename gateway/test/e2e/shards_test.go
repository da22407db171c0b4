package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/meshplane/meshplane/sdk/process"
	"github.com/meshplane/meshplane/sdk/testing/framework"
)

const configMapsQuery = `{ v1 { ConfigMaps(namespace: "default") { items { metadata { name } } } } }`

// TestShardedGateway runs the gateway in front of a root shard and shard b
// behind a front proxy: a workspace on b answers queries and a
// subscription, and a CRD created there shows in its schema at once (the
// gateway watches b's CRDs). A shard c started while the gateway runs is
// served the same way, and when c is killed its workspace answers an error
// while b's goes on working.
func TestShardedGateway(t *testing.T) {
	if framework.ExternalMode() {
		t.Skip("starts its own shards")
	}
	sh := framework.StartShards(t)
	url := startShardedGateway(t, sh)
	alice := sh.Root.UserToken(t, "alice")

	onB := userWorkspaceOn(t, sh.Via, "gql-b", "b", "alice")
	sh.Via.KubectlFor(onB.Path).Run(t, "create", "configmap", "on-b", "-n", "default")
	cb := client{url: url + "/api/clusters/" + onB.Path + "/graphql", token: alice}
	waitConfigMap(t, cb, "on-b")

	// A subscription on shard b, over server-sent events.
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	waitEvent(t, sh.Via, onB.Path, "sse-b", sseSubscribe(t, ctx, cb, configMapsSubscription))

	// A CRD in the workspace on b is in its schema within seconds (the
	// fallback re-check is 5 minutes away): the gateway watches b's CRDs.
	waitSchemaType(t, sh.Via, cb, onB.Path, "gizmos", "Gizmo")

	// Shard c joins while the gateway runs.
	rootKubeconfig := sh.RootShardKubeconfig
	c := framework.StartServer(t, framework.WithCredentialsOf(sh.Root), framework.WithExtraArgs(append(sh.Proxy.PKI.ShardArgs(),
		"--shard-name", "c", "--root-shard-kubeconfig", rootKubeconfig, "--shard-external-url", sh.Proxy.URL)...))
	inRoot := sh.Root.KubectlFor("root")
	framework.Eventually(t, 30*time.Second, 200*time.Millisecond, "shard c to register in root", func() (bool, string) {
		out, errOut, err := inRoot.RunErr(t, "get", "shards", "-o", "name")
		return err == nil && strings.Contains(out, "shard.core.kcp.io/c"), out + errOut
	})
	inRoot.Run(t, "label", "--overwrite", "shard", "c", "shard=c")
	onC := userWorkspaceOn(t, sh.Via, "gql-c", "c", "alice")
	sh.Via.KubectlFor(onC.Path).Run(t, "create", "configmap", "on-c", "-n", "default")
	cc := client{url: url + "/api/clusters/" + onC.Path + "/graphql", token: alice}
	waitConfigMap(t, cc, "on-c")
	waitEvent(t, sh.Via, onC.Path, "sse-c", sseSubscribe(t, ctx, cc, configMapsSubscription))
	waitSchemaType(t, sh.Via, cc, onC.Path, "sprockets", "Sprocket")

	// Shard c is lost: its workspace answers an error, b's still works.
	if err := c.Kill(); err != nil {
		t.Fatal(err)
	}
	r := cc.do(t, configMapsQuery, nil)
	if r.Status == 200 && len(r.Errors) == 0 {
		t.Fatalf("a workspace of a killed shard answered without an error: %s", r)
	}
	t.Logf("the workspace on the killed shard c answers: %s", r)
	got := cb.must(t, configMapsQuery, nil)
	framework.RequireContains(t, fmt.Sprint(got), "on-b", "configmaps of the workspace on b after shard c was killed")
}

// startShardedGateway starts a gateway through sh's front proxy, following
// the shards from the root shard, and returns its base URL.
func startShardedGateway(t *testing.T, sh *framework.Shards) string {
	t.Helper()
	bin, err := framework.Binary("graphql-gateway", "gateway", "./cmd/graphql-gateway")
	if err != nil {
		t.Fatalf("graphql-gateway binary: %v", err)
	}
	ports, err := process.FreePorts(1)
	if err != nil {
		t.Fatal(err)
	}
	addr := "127.0.0.1:" + strconv.Itoa(ports[0])
	logPath := filepath.Join(t.TempDir(), "graphql-gateway.log")
	lf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--kubeconfig", sh.RootShardKubeconfig, "--front-proxy-kubeconfig", sh.Proxy.Kubeconfig,
		"--listen", addr, "--schema-refresh-interval", "5m")
	cmd.Stdout, cmd.Stderr = lf, lf
	p, err := process.StartProcess(cmd)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = p.Stop(5 * time.Second)
		lf.Close()
		if t.Failed() {
			b, _ := os.ReadFile(logPath)
			t.Logf("graphql-gateway log:\n%s", b)
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := process.WaitReady(ctx, "http://"+addr+"/readyz", 100*time.Millisecond, p.Exited()); err != nil {
		t.Fatalf("graphql-gateway did not get ready: %v", err)
	}
	return "http://" + addr
}

// userWorkspaceOn creates a workspace pinned to shard through s (the
// proxy) in which user is cluster-admin.
func userWorkspaceOn(t *testing.T, s *framework.Server, prefix, shard, user string) framework.Workspace {
	t.Helper()
	ws := framework.CreatePinnedWorkspace(t, s, "root", framework.UniqueName(prefix), shard)
	s.KubectlFor(ws.Path).Run(t, "create", "clusterrolebinding", user+"-admin", "--clusterrole=cluster-admin", "--user="+user)
	return ws
}

// waitConfigMap queries the configmaps of c's workspace until name is
// listed (the proxy learns of a new workspace, and RBAC of a new binding,
// within moments).
func waitConfigMap(t *testing.T, c client, name string) {
	t.Helper()
	framework.Eventually(t, 60*time.Second, 250*time.Millisecond, "configmap "+name+" in a GraphQL query of "+c.url, func() (bool, string) {
		r := c.do(t, configMapsQuery, nil)
		return r.Status == 200 && len(r.Errors) == 0 && strings.Contains(r.Raw, `"`+name+`"`), r.String()
	})
}

// waitSchemaType creates a CRD in workspace ws and waits until its kind is
// a type of the workspace's schema.
func waitSchemaType(t *testing.T, s *framework.Server, c client, ws, plural, kind string) {
	t.Helper()
	q := fmt.Sprintf(`{ __type(name: %q) { name } }`, kind)
	if got := c.must(t, q, nil)["__type"]; got != nil {
		t.Fatalf("%s is in the schema of %s before its CRD: %v", kind, ws, got)
	}
	s.KubectlFor(ws).RunStdin(t, framework.SchemalessCRD("gql.example.dev", plural, kind), "apply", "-f", "-")
	start := time.Now()
	framework.Eventually(t, 20*time.Second, 200*time.Millisecond, kind+" in the schema of "+ws, func() (bool, string) {
		r := c.do(t, q, nil)
		return strings.Contains(r.Raw, `"name":"`+kind+`"`), r.String()
	})
	t.Logf("%s in the schema of %s %v after its CRD was applied", kind, ws, time.Since(start).Round(10*time.Millisecond))
}

// configMapsSubscription subscribes to the configmaps of namespace default.
const configMapsSubscription = `subscription { v1_configmaps(namespace: "default") { type object { metadata { name } data } } }`
