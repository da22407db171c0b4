package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/meshplane/meshplane/platform/launcher"
	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// TestLauncherShards runs `make run SHARDS=2`: shard b and the front proxy
// on the range's last offsets, platform.env's KUBECONFIG on the proxy,
// through which kubectl and kubectl ws reach workspaces on both shards.
func TestLauncherShards(t *testing.T) {
	root := filepath.Join(t.TempDir(), "sharded")
	base := freeBase(t)
	p := startPlatform(t, root, base, "--shards", "2")
	env := p.waitReady(t)

	kubeconfig := filepath.Join(root, "front-proxy", "admin.kubeconfig")
	framework.RequireEqual(t, env["KUBECONFIG"], kubeconfig, "platform.env KUBECONFIG")
	framework.RequireEqual(t, env["FRONT_PROXY_URL"], fmt.Sprintf("https://127.0.0.1:%d", base+19), "platform.env FRONT_PROXY_URL")
	framework.RequireEqual(t, env["SHARD_B_URL"], fmt.Sprintf("https://127.0.0.1:%d", base+16), "platform.env SHARD_B_URL")
	ports, err := listeningPorts(p.cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	for _, port := range ports {
		if port < base || port >= base+launcher.PortRange {
			t.Errorf("the platform listens on port %d, outside its range %d..%d (all: %v)", port, base, base+launcher.PortRange-1, ports)
		}
	}
	if !strings.Contains(fmt.Sprint(ports), fmt.Sprint(base+19)) {
		t.Errorf("nothing listens on the front proxy's port %d (all: %v)", base+19, ports)
	}

	// Every server of the kubeconfig is the proxy.
	for _, server := range strings.Fields(mustKubectl(t, kubeconfig, "config", "view", "-o", `jsonpath={range .clusters[*]}{.cluster.server}{" "}{end}`)) {
		if server != env["FRONT_PROXY_URL"] && !strings.HasPrefix(server, env["FRONT_PROXY_URL"]+"/") {
			t.Errorf("kubeconfig server %s is not on the front proxy", server)
		}
	}
	framework.RequireEqual(t, mustKubectl(t, kubeconfig, "get", "shards", "-o", "jsonpath={.items[*].metadata.name}"), "b root", "shards")
	mustKubectl(t, kubeconfig, "label", "shard", "b", "shard=b")
	if out := mustKubectl(t, kubeconfig, "--context", "alice", "auth", "whoami", "-o", "jsonpath={.status.userInfo.username}"); out != "alice" {
		t.Errorf("alice's context through the proxy authenticates as %q", out)
	}

	// A workspace on shard b, entered with kubectl ws through the proxy.
	k := framework.PluginKubectl(t, kubeconfig, "root", "")
	k.RunStdin(t, framework.PinnedWorkspace("onb", "b", ""), "apply", "-f", "-")
	cluster, shard := framework.WaitWorkspaceReady(t, k, "onb")
	framework.RequireEqual(t, shard, "b", "shard of root:onb")
	framework.RequireContains(t, k.WS(t, "use", "onb"), `"root:onb"`, "kubectl ws use onb")
	k.Run(t, "create", "configmap", "through-the-proxy")
	// The configmap is on shard b (the root shard's admin kubeconfig
	// trusts b: the shards share their CA).
	framework.Eventually(t, 30*time.Second, 500*time.Millisecond, "the configmap on shard b", func() (bool, string) {
		out, err := kubectl(t, filepath.Join(root, "admin.kubeconfig"), "--context", "shard-base", "--server", env["SHARD_B_URL"]+"/clusters/"+cluster,
			"get", "configmap", "through-the-proxy", "-o", "name")
		return err == nil && out == "configmap/through-the-proxy", out
	})
	k.WS(t, "..")
	framework.RequireEqual(t, k.CurrentWorkspace(t), "root", "kubectl ws .. from root:onb")

	// An organization on shard b (root unschedulable meanwhile): the
	// account-operator and the security-operator initialize it through b's
	// virtual workspaces, and alice reaches it through the proxy.
	mustKubectl(t, kubeconfig, "--context", "shard-base", "--server", env["FRONT_PROXY_URL"]+"/clusters/root", "annotate", "shard", "root", "experimental.core.kcp.io/unschedulable=true")
	start := time.Now()
	mustKubectl(t, kubeconfig, "--context", "alice", "create", "-f", filepath.Join("testdata", "org-account.yaml"))
	waitAccountReady(t, kubeconfig, "acme")
	t.Logf("organization acme on shard b Ready after %s", time.Since(start).Round(10*time.Millisecond))
	// An account in acme, on shard b too: its workspace's type
	// root:orgs:acme-account is on root, where shard b asks for the
	// account-operator's "use" of it (refused for good before).
	acme := env["FRONT_PROXY_URL"] + "/clusters/root:orgs:acme"
	start = time.Now()
	team := filepath.Join(t.TempDir(), "team.yaml")
	if err := os.WriteFile(team, []byte("apiVersion: core.platform-mesh.io/v1alpha1\nkind: Account\nmetadata: {name: team}\nspec: {type: account, displayName: Team}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	eventuallyKubectl(t, kubeconfig, "--context", "alice", "--server", acme, "create", "-f", team)
	waitAccountReady(t, kubeconfig, "team", "--server", acme)
	t.Logf("account team in acme on shard b Ready after %s", time.Since(start).Round(10*time.Millisecond))
	framework.RequireEqual(t, mustKubectl(t, kubeconfig, "--server", acme, "get", "workspace", "team", "-o", `jsonpath={.metadata.annotations.core\.kcp\.io/shard}`),
		"b", "shard of the account team")
	mustKubectl(t, kubeconfig, "--context", "shard-base", "--server", env["FRONT_PROXY_URL"]+"/clusters/root", "annotate", "shard", "root", "experimental.core.kcp.io/unschedulable-")
	boundOnShardB(t, kubeconfig, env)
	framework.RequireEqual(t, mustKubectl(t, kubeconfig, "--server", env["FRONT_PROXY_URL"]+"/clusters/root:orgs", "get", "workspace", "acme",
		"-o", `jsonpath={.metadata.annotations.core\.kcp\.io/shard}`), "b", "shard of the organization acme")
	framework.RequireEqual(t, eventuallyKubectl(t, kubeconfig, "--context", "alice", "--server", env["FRONT_PROXY_URL"]+"/clusters/root:orgs:acme",
		"get", "accountinfo", "account", "-o", "jsonpath={.spec.organization.name}"), "acme", "acme's AccountInfo, read by alice through the proxy")
	// The GraphQL gateway serves acme on shard b (through the proxy).
	framework.RequireContains(t, eventuallyGraphQL(t, env["GRAPHQL_URL"]+"/api/clusters/root:orgs:acme/graphql", demoToken(t, root, "alice"),
		`{ core_platform_mesh_io { v1alpha1 { AccountInfo(name: "account") { spec { organization { name } } } } } }`),
		`"organization":{"name":"acme"}`, "acme's AccountInfo, read by alice through the GraphQL gateway")

	// The commands of docs/sharding.md, "Locally", as a user pastes them.
	out := runShardingDoc(t, root)
	for _, want := range []string{"workspace.tenancy.kcp.io/team-b created", `Current workspace is "root:team-b"`, "configmap/hello created", "Username    alice"} {
		framework.RequireContains(t, out, want, "output of docs/sharding.md's commands")
	}
	p.stop(t)
}

// runShardingDoc runs the sh block of docs/sharding.md that talks to a
// sharded platform (the one with kubectl ws use team-b), its
// /tmp/sharded replaced by root, with the kubectl-ws plugin on $PATH.
func runShardingDoc(t *testing.T, root string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "sharding.md"))
	if err != nil {
		t.Fatal(err)
	}
	var block string
	for _, m := range shBlock.FindAllStringSubmatch(string(data), -1) {
		if strings.Contains(m[1], "kubectl ws use team-b") {
			block = m[1]
		}
	}
	if block == "" {
		t.Fatal("docs/sharding.md has no block with kubectl ws use team-b")
	}
	plugin, err := framework.KubectlWSDir()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", "-e", "-x", "-c", strings.ReplaceAll(block, "/tmp/sharded", root))
	cmd.Env = append(os.Environ(), "PATH="+plugin+":"+os.Getenv("PATH"))
	out, err := cmd.CombinedOutput()
	t.Logf("docs/sharding.md:\n%s", out)
	if err != nil {
		t.Fatalf("the commands of docs/sharding.md failed: %v", err)
	}
	return string(out)
}

// demoToken is the token of a demo user of the platform in root.
func demoToken(t *testing.T, root, user string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "demo-users.csv"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Split(line, ","); len(f) > 1 && f[1] == user {
			return f[0]
		}
	}
	t.Fatalf("no demo user %s", user)
	return ""
}

// eventuallyGraphQL posts query to endpoint with token until the answer
// has no errors, and returns it.
func eventuallyGraphQL(t *testing.T, endpoint, token, query string) string {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"query": query})
	var out string
	framework.Eventually(t, time.Minute, 500*time.Millisecond, "a GraphQL answer without errors from "+endpoint, func() (bool, string) {
		req, _ := http.NewRequest("POST", endpoint, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return false, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		out = string(b)
		return resp.StatusCode == http.StatusOK && !strings.Contains(out, `"errors"`), fmt.Sprintf("%d %s", resp.StatusCode, out)
	})
	return out
}

// boundOnShardB (issue 26): an export bound only in the account team of
// acme (both on shard b) joins acme's OpenFGA model: the
// security-operator watches every shard's APIBindings (it watched the
// root shard only, and never saw this binding).
func boundOnShardB(t *testing.T, kubeconfig string, env map[string]string) {
	t.Helper()
	proxy := env["FRONT_PROXY_URL"]
	team := proxy + "/clusters/root:orgs:acme:team"
	as := func(user string) []string { return []string{"--context", user, "--server", team} }
	admin := []string{"--context", "shard-base", "--server", proxy + "/clusters/root"}
	applyStdin(t, kubeconfig, admin, "apiVersion: tenancy.kcp.io/v1alpha1\nkind: Workspace\nmetadata: {name: widget-provider}\n")
	mustKubectl(t, kubeconfig, append(admin, "wait", "--for=jsonpath={.status.phase}=Ready", "workspace/widget-provider", "--timeout=120s")...)
	applyStdin(t, kubeconfig, []string{"--context", "shard-base", "--server", proxy + "/clusters/root:widget-provider"}, widgetExport)

	// alice binds the export in her account only.
	applyStdin(t, kubeconfig, as("alice"), "apiVersion: apis.kcp.io/v1alpha2\nkind: APIBinding\nmetadata: {name: widgets}\n"+
		"spec:\n  reference: {export: {path: root:widget-provider, name: widgets.example.dev}}\n")
	mustKubectl(t, kubeconfig, append(as("alice"), "wait", "--for=jsonpath={.status.phase}=Bound", "apibinding/widgets", "--timeout=60s")...)
	start := time.Now()
	// The Store's resync (30 s) bounds the wait; without the watch of
	// shard b it never ends (the binding is in no organization's
	// workspace, and only the watch names account workspaces that bind).
	framework.Eventually(t, 2*time.Minute, 500*time.Millisecond, "acme's model to have the widgets bound in its team on shard b", func() (bool, string) {
		types := modelTypes(t, kubeconfig, env, "acme")
		return slices.Contains(types, "example_dev_widget"), fmt.Sprint(types)
	})
	t.Logf("widgets bound in acme's team on shard b in acme's model after %s", time.Since(start).Round(10*time.Millisecond))
}

// modelTypes are the type names of the OpenFGA model of the
// organization's Store (its status's store and model ids), read from
// OpenFGA with the platform's preshared key.
func modelTypes(t *testing.T, kubeconfig string, env map[string]string, org string) []string {
	t.Helper()
	ids, err := kubectl(t, kubeconfig, "--context", "shard-base", "--server", env["FRONT_PROXY_URL"]+"/clusters/root:orgs", "get", "store", org,
		"-o", `jsonpath={.status.storeId} {.status.authorizationModelId}`)
	f := strings.Fields(ids)
	if err != nil || len(f) != 2 {
		return nil
	}
	key, err := os.ReadFile(env["OPENFGA_PRESHARED_KEY_FILE"])
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest("GET", env["OPENFGA_URL"]+"/stores/"+f[0]+"/authorization-models/"+f[1], nil)
	req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(key)))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	var model struct {
		AuthorizationModel struct {
			TypeDefinitions []struct {
				Type string `json:"type"`
			} `json:"type_definitions"`
		} `json:"authorization_model"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&model); err != nil {
		return nil
	}
	var types []string
	for _, td := range model.AuthorizationModel.TypeDefinitions {
		types = append(types, td.Type)
	}
	return types
}

// widgetExport is a provider's export of widgets, with bind granted to
// every signed-in user.
const widgetExport = `apiVersion: apis.kcp.io/v1alpha1
kind: APIResourceSchema
metadata: {name: v1.widgets.example.dev}
spec:
  group: example.dev
  names: {kind: Widget, listKind: WidgetList, plural: widgets, singular: widget}
  scope: Namespaced
  versions:
  - name: v1alpha1
    served: true
    storage: true
    schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
---
apiVersion: apis.kcp.io/v1alpha2
kind: APIExport
metadata: {name: widgets.example.dev}
spec:
  resources:
  - {name: widgets, group: example.dev, schema: v1.widgets.example.dev, storage: {crd: {}}}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: bind-widgets}
rules:
- {apiGroups: [apis.kcp.io], resources: [apiexports], resourceNames: [widgets.example.dev], verbs: [bind]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: bind-widgets}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: bind-widgets}
subjects:
- {apiGroup: rbac.authorization.k8s.io, kind: Group, name: "system:authenticated"}
`
