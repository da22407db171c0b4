package e2e

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

const orgsAPI = "/clusters/root:orgs/apis/core.platform-mesh.io/v1alpha1/accounts"
const orgsWorkspaces = "/clusters/root:orgs/apis/tenancy.kcp.io/v1alpha1/workspaces"

// TestOutsidersSeeNoOrganization (issue 23, "everyone sees every org"):
// alice founds hiddenorg. bob, an outsider, learns nothing of it in
// root:orgs: not by listing, watching or getting Accounts or Workspaces
// (kubectl and raw), not by `kubectl ws tree`, not through GraphQL; a
// refusal for hiddenorg reads as one for a name nobody took. alice reads
// her organization by name from its creation on (kubectl wait), enters it
// with `kubectl ws use`. Once a member (a RoleAssignment), bob reads it by
// name and enters it, and still lists nothing.
func TestOutsidersSeeNoOrganization(t *testing.T) {
	p := startPlatform(t)
	const org = "root:orgs:hiddenorg"
	const secret = "Hidden Inc"

	p.must(t, "alice", "root:orgs", strings.Replace(account("hiddenorg", "org"), "displayName: hiddenorg", "displayName: "+secret, 1), "create", "-f", "-")
	p.must(t, "alice", "root:orgs", "", "wait", "--for=condition=Ready", "account/hiddenorg", "--timeout=120s")
	p.must(t, "alice", "root:orgs", "", "get", "workspace", "hiddenorg")
	p.wsMust(t, "alice", "use", org)

	leaks := func(what, out string) {
		t.Helper()
		for _, trace := range []string{"hiddenorg", secret} {
			if strings.Contains(out, trace) {
				t.Errorf("%s shows %q:\n%s", what, trace, out)
			}
		}
	}
	refusedQuietly := func(what string, args ...string) {
		t.Helper()
		out, err := p.kubectl(t, "bob", "root:orgs", "", args...)
		framework.RequireFails(t, "", out, err, what, "Forbidden")
		leaks(what, out)
	}
	// A refusal of a name bob asked for repeats the name, nothing else.
	refusedNamed := func(what string, args ...string) {
		t.Helper()
		out, err := p.kubectl(t, "bob", "root:orgs", "", args...)
		framework.RequireFails(t, "", out, err, what, "Forbidden")
		if strings.Contains(out, secret) || strings.Contains(out, "alice") {
			t.Errorf("%s shows hiddenorg's display name or founder:\n%s", what, out)
		}
	}
	outsider := func(who string) {
		refusedQuietly(who+" listing accounts", "get", "accounts")
		refusedQuietly(who+" listing workspaces", "get", "workspaces")
		refusedQuietly(who+" watching accounts", "get", "--raw", orgsAPI+"?watch=true&timeoutSeconds=1")
		refusedQuietly(who+" watching workspaces", "get", "--raw", orgsWorkspaces+"?watch=true&timeoutSeconds=1")
		refusedQuietly(who+" listing accounts with a label selector", "get", "--raw", orgsAPI+"?labelSelector=x!%3Dy")
		out, err := p.wsRun(t, "bob", "tree")
		leaks(who+"'s kubectl ws tree", out)
		if err == nil && strings.Contains(out, "hiddenorg") {
			t.Errorf("%s's kubectl ws tree lists hiddenorg", who)
		}
		// GraphQL is the core's answer with bob's token (the same queries
		// answer alice in her organization: they are valid).
		for _, q := range []string{
			`{ core_platform_mesh_io { v1alpha1 { Accounts { items { metadata { name } spec { displayName creator } } } } } }`,
			`{ tenancy_kcp_io { v1alpha1 { Workspaces { items { metadata { name } spec { URL } } } } } }`,
		} {
			if out := p.graphql(t, "alice", org, q); !strings.Contains(out, `"items":[]`) {
				t.Errorf("alice's GraphQL %s in %s: %s", q, org, out)
			}
			out := p.graphql(t, "bob", "root:orgs", q)
			leaks(who+"'s GraphQL "+q, out)
			if !strings.Contains(out, "Forbidden") {
				t.Errorf("%s's GraphQL %s in root:orgs is not refused: %s", who, q, out)
			}
		}
	}
	outsider("bob (an outsider)")
	refusedNamed("bob getting account hiddenorg", "get", "account", "hiddenorg")
	refusedNamed("bob getting workspace hiddenorg", "get", "workspace", "hiddenorg")
	refusedNamed("bob watching account hiddenorg", "get", "--raw", orgsAPI+"?watch=true&timeoutSeconds=1&fieldSelector=metadata.name%3Dhiddenorg")
	const byName = `{ core_platform_mesh_io { v1alpha1 { Account(name: "hiddenorg") { spec { displayName creator } } } } }`
	if out := p.graphql(t, "bob", "root:orgs", byName); !strings.Contains(out, "Forbidden") {
		t.Errorf("bob's GraphQL Account(name: hiddenorg) is not refused: %s", out)
	} else if strings.Contains(out, secret) || strings.Contains(out, "alice") {
		t.Errorf("bob's GraphQL Account(name: hiddenorg) shows its display name or founder: %s", out)
	}
	if out := p.graphql(t, "alice", "root:orgs", byName); !strings.Contains(out, secret) {
		t.Errorf("alice's GraphQL Account(name: hiddenorg): %s", out)
	}
	// A taken name is refused as a free one is.
	taken, _ := p.kubectl(t, "bob", "root:orgs", "", "get", "account", "hiddenorg")
	free, _ := p.kubectl(t, "bob", "root:orgs", "", "get", "account", "nosuchorg")
	if strings.ReplaceAll(taken, "hiddenorg", "X") != strings.ReplaceAll(free, "nosuchorg", "X") {
		t.Errorf("bob tells a taken organization name from a free one:\n%s\n%s", taken, free)
	}
	if out, err := p.wsRun(t, "bob", "use", org); err == nil {
		t.Errorf("bob (an outsider) entered %s: %s", org, out)
	}

	// bob founds his own organization: reading it by name (a list or watch
	// with its name as field selector) shows his and nothing else.
	p.must(t, "bob", "root:orgs", strings.ReplaceAll(account("bobsorg", "org"), "creator: alice", "creator: bob"), "create", "-f", "-")
	p.must(t, "bob", "root:orgs", "", "wait", "--for=condition=Ready", "account/bobsorg", "--timeout=120s")
	for _, base := range []string{orgsAPI, orgsWorkspaces} {
		for _, q := range []string{"?fieldSelector=metadata.name%3Dbobsorg", "?resourceVersion=0&fieldSelector=metadata.name%3D%3Dbobsorg",
			"?watch=true&timeoutSeconds=2&fieldSelector=metadata.name%3Dbobsorg", "?fieldSelector=metadata.name%3Dbobsorg,metadata.name!%3Dx"} {
			out := p.must(t, "bob", "root:orgs", "", "get", "--raw", base+q)
			leaks("bob's read of his own organization "+base+q, out)
			if !strings.Contains(out, `"name":"bobsorg"`) {
				t.Errorf("bob's read of his own organization %s%s does not show it: %s", base, q, out)
			}
		}
	}

	// A member reads his organization by name and enters it; lists stay closed.
	p.must(t, "alice", org, roleAssignment("bob-member", "bob", "member"), "create", "-f", "-")
	p.eventually(t, "bob to get account hiddenorg once a member", true, "bob", "root:orgs", "get", "account", "hiddenorg")
	p.must(t, "bob", "root:orgs", "", "get", "workspace", "hiddenorg")
	p.must(t, "bob", "root:orgs", "", "wait", "--for=condition=Ready", "account/hiddenorg", "--timeout=10s")
	p.wsMust(t, "bob", "use", org)
	refusedQuietly("bob (a member) listing accounts", "get", "accounts")
	refusedQuietly("bob (a member) listing workspaces", "get", "workspaces")
}

// wsRun runs the kubectl-ws plugin as a context on a copy of the
// kubeconfig (use rewrites it).
func (p *platform) wsRun(t *testing.T, context string, args ...string) (string, error) {
	t.Helper()
	data, err := os.ReadFile(p.kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kc, data, 0o600); err != nil {
		t.Fatal(err)
	}
	bin, err := framework.Binary("kubectl-ws", "core", "./cmd/kubectl-ws")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, append([]string{"--kubeconfig", kc, "--context", context}, args...)...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func (p *platform) wsMust(t *testing.T, context string, args ...string) string {
	t.Helper()
	out, err := p.wsRun(t, context, args...)
	if err != nil {
		t.Fatalf("kubectl ws %s as %s: %v\n%s", strings.Join(args, " "), context, err, out)
	}
	return out
}

// graphql posts a query to the gateway with a context's token and returns
// the answer's body.
func (p *platform) graphql(t *testing.T, context, workspace, query string) string {
	t.Helper()
	return p.graphqlAt(t, context, "/api/clusters/"+workspace+"/graphql", query)
}

// graphqlAt posts a query to a path of the gateway.
func (p *platform) graphqlAt(t *testing.T, context, path, query string) string {
	t.Helper()
	token := strings.TrimSpace(p.must(t, context, "root:orgs", "", "config", "view", "--raw", "--minify", "-o", "jsonpath={.users[0].user.token}"))
	body, _ := json.Marshal(map[string]string{"query": query})
	req, err := http.NewRequest(http.MethodPost, p.env["GRAPHQL_URL"]+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	_, _ = b.ReadFrom(resp.Body)
	return b.String()
}

// TestOwnersDeleteTheirOrganization (issue 23): the founder deletes her
// organization's Account in root:orgs, and so may an owner granted by a
// RoleAssignment; a member and an outsider may not.
func TestOwnersDeleteTheirOrganization(t *testing.T) {
	p := startPlatform(t)
	for _, org := range []string{"delorg", "delorg2"} {
		p.must(t, "alice", "root:orgs", account(org, "org"), "create", "-f", "-")
	}
	for _, org := range []string{"delorg", "delorg2"} {
		p.must(t, "alice", "root:orgs", "", "wait", "--for=condition=Ready", "account/"+org, "--timeout=120s")
		p.eventually(t, "alice to list the accounts of "+org, true, "alice", "root:orgs:"+org, "get", "accounts")
	}
	p.must(t, "alice", "root:orgs:delorg", roleAssignment("bob-member", "bob", "member"), "create", "-f", "-")
	p.must(t, "alice", "root:orgs:delorg2", roleAssignment("carol-owner", "carol", "owner"), "create", "-f", "-")
	p.eventually(t, "bob to read delorg once a member", true, "bob", "root:orgs", "get", "account", "delorg")

	out, err := p.kubectl(t, "bob", "root:orgs", "", "delete", "account", "delorg2", "--dry-run=server")
	framework.RequireFails(t, "", out, err, "bob (an outsider) deleting delorg2", "Forbidden")
	out, err = p.kubectl(t, "bob", "root:orgs", "", "delete", "account", "delorg", "--dry-run=server")
	framework.RequireFails(t, "", out, err, "bob (a member) deleting delorg", "Forbidden")

	// An owner by grant deletes delorg2 (dry run), the founder delorg.
	p.eventuallyAs(t, "carol (owner of delorg2) to delete it", true, "carol", "root:orgs", "delete", "account", "delorg2", "--dry-run=server")
	if out, err := p.run(t, "carol", "root:orgs", "", "delete", "account", "delorg", "--dry-run=server"); err == nil || !strings.Contains(out, "Forbidden") {
		t.Errorf("carol (owner of delorg2 only) deleted delorg (err %v): %s", err, out)
	}
	p.must(t, "alice", "root:orgs", "", "delete", "account", "delorg", "--wait=true", "--timeout=120s")
	if out, err := p.kubectl(t, "base", "root:orgs", "", "get", "workspace", "delorg"); err == nil || !strings.Contains(out, "NotFound") {
		t.Errorf("delorg's workspace is still there after its Account was deleted (err %v): %s", err, out)
	}
}
