package e2e

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// myOrgs runs kubectl as user (and group, for an impersonated user)
// against the "My organizations" virtual workspace.
func (p *platform) myOrgs(t *testing.T, user, group string, args ...string) (string, error) {
	t.Helper()
	ctx, rest := userArgs(user, args)
	if group != "" {
		rest = append([]string{"--as-group", group, "--as-group", "system:authenticated"}, rest...)
	}
	full := append([]string{"--kubeconfig", p.kubeconfig, "--context", ctx,
		"--server", p.env["CORE_URL"] + "/services/myorgs/clusters/root:orgs", "--request-timeout", "30s"}, rest...)
	cmd := exec.Command(framework.KubectlBinary(), full...)
	cmd.Env = append(os.Environ(), "KUBECACHEDIR="+t.TempDir())
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// myOrgNames lists the names kubectl get accounts shows user through the
// virtual workspace.
func (p *platform) myOrgNames(t *testing.T, user, group string) []string {
	t.Helper()
	out, err := p.myOrgs(t, user, group, "get", "accounts", "-o", "name")
	if err != nil {
		t.Fatalf("%s listing their organizations: %v\n%s", user, err, out)
	}
	var names []string
	for _, l := range strings.Fields(out) {
		names = append(names, strings.TrimPrefix(l, "account.core.platform-mesh.io/"))
	}
	slices.Sort(names)
	return names
}

func (p *platform) eventuallyMyOrgs(t *testing.T, what, user, group string, want ...string) {
	t.Helper()
	framework.Eventually(t, 60*time.Second, 250*time.Millisecond, what, func() (bool, string) {
		got := p.myOrgNames(t, user, group)
		return slices.Equal(got, want), strings.Join(got, ",")
	})
}

// TestMyOrganizations (issue 23): /services/myorgs/clusters/root:orgs
// lists, with kubectl get (and watch), exactly the organizations a user
// has a role in: founded, granted by a RoleAssignment to the user or to
// one of the user's groups; an outsider lists nothing, a member of acme
// does not see globex (not by list, get or watch), a revoked member's
// organization disappears. What a tenant writes in an organization
// (a RoleAssignment, an Account named like another organization) shows
// nothing of another organization. The virtual workspace is read-only.
func TestMyOrganizations(t *testing.T) {
	p := startPlatform(t)
	const acme, globex, mallorg = "myacme", "myglobex", "mymallory"
	p.must(t, "alice", "root:orgs", account(acme, "org"), "create", "-f", "-")
	p.runMust(t, "dave", "root:orgs", account(globex, "org"), "create", "-f", "-")
	p.runMust(t, "mallory", "root:orgs", account(mallorg, "org"), "create", "-f", "-")
	for _, org := range []string{acme, globex, mallorg} {
		p.must(t, "base", "root:orgs", "", "wait", "--for=condition=Ready", "account/"+org, "--timeout=120s")
	}

	// Founders see their own organization, and only it.
	p.eventuallyMyOrgs(t, "alice to list acme only", "alice", "", acme)
	p.eventuallyMyOrgs(t, "dave to list globex only", "dave", "", globex)
	// An outsider lists nothing and reads nothing by name.
	if got := p.myOrgNames(t, "erin", ""); len(got) != 0 {
		t.Errorf("erin (no role anywhere) lists %v", got)
	}
	out, err := p.myOrgs(t, "erin", "", "get", "account", globex)
	framework.RequireFails(t, "", out, err, "erin reading globex by name through myorgs", "NotFound")

	// GraphQL: the same answer at /api/myorgs/graphql.
	const query = `{ core_platform_mesh_io { v1alpha1 { Accounts { items { metadata { name } spec { creator } } } } } }`
	if out := p.graphqlAt(t, "alice", "/api/myorgs/graphql", query); !strings.Contains(out, `"name":"`+acme+`"`) || strings.Contains(out, globex) || strings.Contains(out, mallorg) {
		t.Errorf("alice's organizations through GraphQL: %s", out)
	}
	if out := p.graphqlAt(t, "bob", "/api/myorgs/graphql", query); !strings.Contains(out, `"items":[]`) {
		t.Errorf("bob's organizations through GraphQL before any grant: %s", out)
	}

	// A member by a grant to the user.
	const orgWS = "root:orgs:" + acme
	p.eventually(t, "alice to list the accounts of acme", true, "alice", orgWS, "get", "accounts")
	p.must(t, "alice", orgWS, roleAssignment("bob-member", "bob", "member"), "create", "-f", "-")
	p.must(t, "alice", orgWS, "", "wait", "--for=condition=Ready", "roleassignment/bob-member", "--timeout=60s")
	p.eventuallyMyOrgs(t, "bob (member of acme) to list acme only", "bob", "", acme)
	out, err = p.myOrgs(t, "bob", "", "get", "account", globex)
	framework.RequireFails(t, "", out, err, "bob (member of acme) reading globex by name", "NotFound")
	if out, err := p.myOrgs(t, "bob", "", "get", "account", acme, "-o", "jsonpath={.spec.creator}"); err != nil || out != "alice" {
		t.Errorf("bob reading acme through myorgs: creator %q (%v)", out, err)
	}
	// A grant of a role the model does not have grants nothing, and
	// shows nothing (the index only proposes; OpenFGA decides).
	p.must(t, "alice", orgWS, roleAssignment("gina-viewer", "gina", "viewerx"), "create", "-f", "-")
	framework.Eventually(t, 60*time.Second, 250*time.Millisecond, "gina's RoleAssignment to be refused", func() (bool, string) {
		out, _ := p.kubectl(t, "alice", orgWS, "", "get", "roleassignment", "gina-viewer", "-o", `jsonpath={.status.conditions[?(@.type=="Ready")].reason}`)
		return strings.TrimSpace(out) == "UnknownRole", out
	})
	if got := p.myOrgNames(t, "gina", ""); len(got) != 0 {
		t.Errorf("gina (a grant of a role that does not exist) lists %v", got)
	}
	// A member by a grant to a group.
	p.must(t, "alice", orgWS, groupAssignment("devs-member", "acme-devs", "member"), "create", "-f", "-")
	p.must(t, "alice", orgWS, "", "wait", "--for=condition=Ready", "roleassignment/devs-member", "--timeout=60s")
	p.eventuallyMyOrgs(t, "frank (group acme-devs) to list acme", "frank", "acme-devs", acme)
	if got := p.myOrgNames(t, "frank", "other-devs"); len(got) != 0 {
		t.Errorf("frank in another group lists %v", got)
	}

	// What mallory writes in his own organization names globex in vain:
	// a grant there is on his organization, an account there is no
	// organization.
	const malWS = "root:orgs:" + mallorg
	p.eventuallyAs(t, "mallory to list the accounts of his organization", true, "mallory", malWS, "get", "accounts")
	p.runMust(t, "mallory", malWS, roleAssignment("globex", "mallory", "member"), "create", "-f", "-")
	p.runMust(t, "mallory", malWS, account(globex, "account"), "create", "-f", "-")
	p.runMust(t, "mallory", malWS, "", "wait", "--for=condition=Ready", "roleassignment/globex", "--timeout=60s")
	if got := p.myOrgNames(t, "mallory", ""); !slices.Equal(got, []string{mallorg}) {
		t.Errorf("mallory lists %v, want only %s", got, mallorg)
	}

	// Watch: alice's watch shows acme and nothing of globex while dave
	// changes it.
	watch := make(chan string, 1)
	go func() {
		out, _ := p.myOrgs(t, "alice", "", "get", "accounts", "--watch", "-o", "name", "--request-timeout", "8s")
		watch <- out
	}()
	time.Sleep(2 * time.Second)
	p.must(t, "base", "root:orgs", "", "label", "account", globex, "touched=yes")
	if out := <-watch; !strings.Contains(out, acme) || strings.Contains(out, globex) {
		t.Errorf("alice's watch through myorgs: %q, want %s and not %s", out, acme, globex)
	}

	// Read-only.
	out, err = p.myOrgs(t, "alice", "", "delete", "account", acme, "--wait=false")
	framework.RequireFails(t, "", out, err, "alice deleting through myorgs", "Forbidden")

	// Revoked: bob's organization disappears.
	p.must(t, "alice", orgWS, "", "delete", "roleassignment", "bob-member")
	p.eventuallyMyOrgs(t, "bob to list nothing once his grant is deleted", "bob", "")
}
