package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// onShard makes every shard but shard unschedulable (and shard
// schedulable): new workspaces land there.
func onShard(t *testing.T, kubeconfig string, env map[string]string, shard string, all []string) {
	t.Helper()
	inRoot := []string{"--context", "shard-base", "--server", env["FRONT_PROXY_URL"] + "/clusters/root"}
	for _, s := range all {
		if s == shard {
			mustKubectl(t, kubeconfig, append(inRoot, "annotate", "shard", s, "experimental.core.kcp.io/unschedulable-")...)
		} else {
			mustKubectl(t, kubeconfig, append(inRoot, "annotate", "--overwrite", "shard", s, "experimental.core.kcp.io/unschedulable=true")...)
		}
	}
}

// shardJourney is what a tenant does on one shard, through the front
// proxy and the GraphQL gateway: alice founds the organization org-<shard>
// (placed on shard by onShard) and an account in it, both Ready and on
// shard; bob is refused in it until alice grants him the member role (a
// RoleAssignment: the security-operator writes it to OpenFGA, the
// rebac-authz-webhook answers the shard's check); alice reads her
// AccountInfo and follows her configmaps over the gateway (query and
// subscription); and the MongoDB example provider reconciles a MongoDB
// made in the organization into its downstream workspace.
func shardJourney(t *testing.T, root, kubeconfig string, env map[string]string, shard string, all []string) {
	t.Helper()
	proxy := env["FRONT_PROXY_URL"]
	org, path := "org-"+shard, "root:orgs:org-"+shard
	inOrg := func(user string) []string {
		return []string{"--context", user, "--server", proxy + "/clusters/" + path}
	}
	shardOf := func(parent, name string) string {
		return mustKubectl(t, kubeconfig, "--context", "shard-base", "--server", proxy+"/clusters/"+parent, "get", "workspace", name,
			"-o", `jsonpath={.metadata.annotations.core\.kcp\.io/shard}`)
	}

	onShard(t, kubeconfig, env, shard, all)
	start := time.Now()
	createAccount(t, kubeconfig, []string{"--context", "alice"}, org, "org")
	waitAccountReady(t, kubeconfig, org)
	t.Logf("shard %s: organization %s Ready after %s", shard, org, time.Since(start).Round(10*time.Millisecond))
	framework.RequireEqual(t, shardOf("root:orgs", org), shard, "shard of "+path)
	start = time.Now()
	createAccount(t, kubeconfig, inOrg("alice"), "team", "account")
	waitAccountReady(t, kubeconfig, "team", "--server", proxy+"/clusters/"+path)
	t.Logf("shard %s: account team in %s Ready after %s", shard, org, time.Since(start).Round(10*time.Millisecond))
	framework.RequireEqual(t, shardOf(path, "team"), shard, "shard of "+path+":team")

	// Grants: bob is a member once alice's RoleAssignment is in OpenFGA.
	eventuallyKubectl(t, kubeconfig, append(inOrg("alice"), "create", "namespace", "apps")...)
	mustKubectl(t, kubeconfig, append(inOrg("alice"), "create", "configmap", "cfg", "-n", "apps", "--from-literal=k=v")...)
	if out, err := kubectl(t, kubeconfig, append(inOrg("bob"), "get", "configmaps", "-n", "apps")...); err == nil || !strings.Contains(out, "Forbidden") {
		t.Fatalf("bob read configmaps in %s before any grant: %v %s", path, err, out)
	}
	applyStdin(t, kubeconfig, inOrg("alice"), "apiVersion: core.platform-mesh.io/v1alpha1\nkind: RoleAssignment\nmetadata: {name: bob-member}\n"+
		"spec:\n  subject: {kind: User, name: bob}\n  role: member\n")
	start = time.Now()
	framework.Eventually(t, time.Minute, 250*time.Millisecond, "bob to read configmaps in "+path+" once a member", func() (bool, string) {
		out, err := kubectl(t, kubeconfig, append(inOrg("bob"), "get", "configmaps", "-n", "apps", "-o", "name")...)
		return err == nil && strings.Contains(out, "configmap/cfg"), out
	})
	t.Logf("shard %s: bob a member of %s after %s", shard, org, time.Since(start).Round(10*time.Millisecond))

	// GraphQL: a query and a subscription in the organization.
	endpoint := env["GRAPHQL_URL"] + "/api/clusters/" + path + "/graphql"
	alice := demoToken(t, root, "alice")
	framework.RequireContains(t, eventuallyGraphQL(t, endpoint, alice,
		`{ core_platform_mesh_io { v1alpha1 { AccountInfo(name: "account") { spec { organization { name } } } } } }`),
		`"organization":{"name":"`+org+`"}`, org+"'s AccountInfo through the GraphQL gateway")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	events := subscribe(t, ctx, endpoint, alice, `subscription { v1_configmaps(namespace: "apps") { type object { metadata { name } } } }`)
	framework.Eventually(t, 45*time.Second, 10*time.Millisecond, "a subscription event for a configmap alice creates in "+path, func() (bool, string) {
		name := fmt.Sprintf("sub-%d", time.Now().UnixNano()%1e6)
		mustKubectl(t, kubeconfig, append(inOrg("alice"), "create", "configmap", name, "-n", "apps")...)
		timeout := time.After(3 * time.Second)
		for {
			select {
			case ev, ok := <-events:
				if !ok {
					t.Fatal("the subscription ended before an event arrived")
				}
				if strings.Contains(ev, `"type":"ADDED"`) && strings.Contains(ev, `"name":"`+name+`"`) {
					return true, ev
				}
			case <-timeout:
				return false, "no event for " + name
			}
		}
	})

	// The MongoDB example provider reconciles a MongoDB of the organization.
	admin := []string{"--context", "shard-base", "--server", proxy + "/clusters/" + path}
	applyStdin(t, kubeconfig, admin, "apiVersion: apis.kcp.io/v1alpha2\nkind: APIBinding\nmetadata: {name: mongodb}\nspec:\n"+
		"  reference: {export: {path: root:examples-mongodb, name: mongodb.examples.meshplane.io}}\n"+
		"  permissionClaims: [{group: \"\", resource: secrets, verbs: [get, create, update, delete], selector: {matchAll: true}, state: Accepted}]\n")
	framework.Eventually(t, time.Minute, 500*time.Millisecond, "the mongodbs API bound in "+path, func() (bool, string) {
		out, err := kubectl(t, kubeconfig, append(admin, "get", "mongodbs", "-n", "apps")...)
		return err == nil, out
	})
	name := "orders-" + shard
	applyStdin(t, kubeconfig, admin, "apiVersion: mongodb.examples.meshplane.io/v1alpha1\nkind: MongoDB\nmetadata: {name: "+name+", namespace: apps}\n"+
		"spec: {version: \"7.0.12\", storageSize: 1Gi}\n")
	start = time.Now()
	mustKubectl(t, kubeconfig, append(admin, "-n", "apps", "wait", "--for=condition=Synced", "mongodb/"+name, "--timeout=90s")...)
	t.Logf("shard %s: MongoDB %s Synced after %s", shard, name, time.Since(start).Round(10*time.Millisecond))
	framework.RequireContains(t, mustKubectl(t, kubeconfig, "--context", "shard-base", "--server", proxy+"/clusters/root:examples-mongodb-downstream",
		"-n", "mongodb-provider", "get", "mongodbcommunity", "-l", "mongodb.examples.meshplane.io/name="+name, "-o", "name"), "mdb-",
		"the downstream object of MongoDB "+name)
}

// createAccount creates an Account as kubectl args say (retried while
// the user's rights in a new organization arrive).
func createAccount(t *testing.T, kubeconfig string, args []string, name, typ string) {
	t.Helper()
	applyStdinCmd(t, kubeconfig, args, "create",
		fmt.Sprintf("apiVersion: core.platform-mesh.io/v1alpha1\nkind: Account\nmetadata: {name: %s}\nspec: {type: %s, displayName: %s}\n", name, typ, name))
}

func applyStdin(t *testing.T, kubeconfig string, args []string, manifest string) {
	t.Helper()
	applyStdinCmd(t, kubeconfig, args, "apply", manifest)
}

// applyStdinCmd runs kubectl <verb> -f - with manifest, retried for up to
// 30 s.
func applyStdinCmd(t *testing.T, kubeconfig string, args []string, verb, manifest string) {
	t.Helper()
	framework.Eventually(t, 30*time.Second, 250*time.Millisecond, "kubectl "+verb+" "+firstLine(manifest, "kind:"), func() (bool, string) {
		cmd := kubectlCmd(kubeconfig, append(args, verb, "-f", "-")...)
		cmd.Stdin = strings.NewReader(manifest)
		out, err := cmd.CombinedOutput()
		return err == nil, string(out)
	})
}

func kubectlCmd(kubeconfig string, args ...string) *exec.Cmd {
	return exec.Command("kubectl", append([]string{"--kubeconfig", kubeconfig}, args...)...)
}

func firstLine(s, prefix string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return ""
}

// subscribe opens a GraphQL subscription over server-sent events and
// returns its data lines.
func subscribe(t *testing.T, ctx context.Context, endpoint, token, query string) <-chan string {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": query})
	req, _ := http.NewRequestWithContext(ctx, "POST", endpoint, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	framework.RequireEqual(t, resp.StatusCode, 200, "status of the subscription at "+endpoint)
	got := make(chan string, 64)
	go func() {
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				got <- d
			}
		}
		close(got)
	}()
	return got
}
