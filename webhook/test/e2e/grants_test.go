package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	corev1alpha1 "github.com/meshplane/meshplane/apis/core/v1alpha1"
	"github.com/meshplane/meshplane/apis/fga"
	"github.com/meshplane/meshplane/operators/fgaclient"
	"github.com/meshplane/meshplane/sdk/keyfile"
	"github.com/meshplane/meshplane/sdk/testing/framework"
)

func roleAssignment(name, user, role string) string {
	return fmt.Sprintf("apiVersion: core.platform-mesh.io/v1alpha1\nkind: RoleAssignment\nmetadata:\n  name: %s\nspec:\n  subject:\n    kind: User\n    name: %s\n  role: %s\n", name, user, role)
}

// users beyond the demo users (alice, bob) are the admin impersonating them.
func userArgs(user string, args []string) (string, []string) {
	if user == "alice" || user == "bob" {
		return user, args
	}
	return "base", append([]string{"--as", user}, args...)
}

// run and runMust are kubectl and must as any user.
func (p *platform) run(t *testing.T, user, workspace, stdin string, args ...string) (string, error) {
	t.Helper()
	ctx, args := userArgs(user, args)
	return p.kubectl(t, ctx, workspace, stdin, args...)
}

func (p *platform) runMust(t *testing.T, user, workspace, stdin string, args ...string) string {
	t.Helper()
	ctx, args := userArgs(user, args)
	return p.must(t, ctx, workspace, stdin, args...)
}

func (p *platform) eventuallyAs(t *testing.T, what string, want bool, user, workspace string, args ...string) {
	t.Helper()
	ctx, args := userArgs(user, args)
	p.eventually(t, what, want, ctx, workspace, args...)
}

// clientset is a user's (a kubeconfig context's) client of a workspace.
func (p *platform) clientset(t *testing.T, context, workspace string) *kubernetes.Clientset {
	t.Helper()
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		&clientcmd.ClientConfigLoadingRules{ExplicitPath: p.kubeconfig},
		&clientcmd.ConfigOverrides{CurrentContext: context, ClusterInfo: clientcmdapi.Cluster{Server: p.env["CORE_URL"] + "/clusters/" + workspace}}).ClientConfig()
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// latency polls every 20 ms until a list of configmaps in namespace apps
// succeeds (want true) or is refused (want false) and returns the time
// since start.
func latency(t *testing.T, cs *kubernetes.Clientset, start time.Time, want bool, what string) time.Duration {
	t.Helper()
	deadline := start.Add(60 * time.Second)
	for {
		_, err := cs.CoreV1().ConfigMaps("apps").List(context.Background(), metav1.ListOptions{})
		if (err == nil) == want {
			return time.Since(start)
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: still %v after 60s (last error: %v)", what, !want, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestRoleAssignments (issue 23): the grant API tenants use in their own
// workspace. alice founds grantorg; a RoleAssignment she creates there makes
// bob a member: he reads, may list RoleAssignments, but may not create or
// delete one, in the org or in an account below it. A role that does not
// exist is refused (UnknownRole) and grants nothing. dave, owner of his own
// organization, can grant nothing in alice's: not there (Forbidden), not
// from his own workspace by any field. alice's ownership (her owner tuples)
// survives apply, merge patch, JSON patch and deletion of grants.
// Deleting the grant refuses bob again. Grant-to-allowed and
// delete-to-refused are measured.
func TestRoleAssignments(t *testing.T) {
	p := startPlatform(t)
	const org, team = "root:orgs:grantorg", "root:orgs:grantorg:team-a"

	p.must(t, "alice", "root:orgs", account("grantorg", "org"), "create", "-f", "-")
	p.must(t, "alice", "root:orgs", "", "wait", "--for=condition=Ready", "account/grantorg", "--timeout=120s")
	p.eventually(t, "alice to list the accounts of her organization", true, "alice", org, "get", "accounts")
	p.must(t, "alice", org, account("team-a", "account"), "create", "-f", "-")
	p.must(t, "alice", org, "", "wait", "--for=condition=Ready", "account/team-a", "--timeout=120s")
	p.eventually(t, "alice to create a namespace in grantorg", true, "alice", org, "create", "namespace", "apps")
	p.must(t, "alice", org, "", "create", "configmap", "cfg", "-n", "apps", "--from-literal=k=v")

	f, origin, storeID := p.orgStore(t, org)
	aliceOwns := p.founderOwns(t, f, origin, storeID, "alice", "grantorg")
	aliceOwns("founding")

	bob := p.clientset(t, "bob", org)
	out, err := p.kubectl(t, "bob", org, "", "get", "configmaps", "-n", "apps")
	framework.RequireFails(t, "", out, err, "bob listing configmaps in grantorg before any grant", "Forbidden")

	// Grant: alice makes bob a member.
	var grants, revokes []time.Duration
	start := time.Now()
	p.must(t, "alice", org, roleAssignment("bob-member", "bob", "member"), "apply", "-f", "-")
	grants = append(grants, latency(t, bob, start, true, "bob to read once granted"))
	p.must(t, "alice", org, "", "wait", "--for=condition=Ready", "roleassignment/bob-member", "--timeout=60s")
	aliceOwns("kubectl apply of a RoleAssignment")

	// List: members see the grants.
	list := p.must(t, "bob", org, "", "get", "roleassignments")
	framework.RequireContains(t, list, "bob-member", "bob listing the RoleAssignments of grantorg")

	// A member manages no grants, here or below.
	out, err = p.kubectl(t, "bob", org, roleAssignment("bob-owner", "bob", "owner"), "create", "-f", "-")
	framework.RequireFails(t, "", out, err, "bob (a member) making himself owner", "Forbidden")
	out, err = p.kubectl(t, "bob", team, roleAssignment("carol-member", "carol", "member"), "create", "-f", "-")
	framework.RequireFails(t, "", out, err, "bob (a member of grantorg) granting in team-a", "Forbidden")
	out, err = p.kubectl(t, "bob", org, "", "delete", "roleassignment", "bob-member")
	framework.RequireFails(t, "", out, err, "bob (a member) deleting a grant", "Forbidden")
	out, err = p.kubectl(t, "bob", org, "", "patch", "roleassignment", "bob-member", "--type=merge", "-p", `{"spec":{"role":"owner"}}`)
	framework.RequireFails(t, "", out, err, "bob (a member) patching his grant to owner", "Forbidden")

	// A role that does not exist, or is no role a user holds, grants nothing.
	for _, role := range []string{"admin", "manage_iam_roles", "delete", "parent"} {
		name := "carol-" + strings.ReplaceAll(role, "_", "-")
		p.must(t, "alice", org, roleAssignment(name, "carol", role), "create", "-f", "-")
		framework.Eventually(t, 60*time.Second, 250*time.Millisecond, "RoleAssignment "+name+" to be refused", func() (bool, string) {
			out, _ := p.kubectl(t, "alice", org, "", "get", "roleassignment", name, "-o", `jsonpath={.status.conditions[?(@.type=="Ready")].reason}`)
			return strings.TrimSpace(out) == corev1alpha1.ReasonUnknownRole, out
		})
		p.must(t, "alice", org, "", "delete", "roleassignment", name)
	}
	out, err = p.run(t, "carol", org, "", "get", "configmaps", "-n", "apps")
	framework.RequireFails(t, "", out, err, "carol after grants of roles that do not exist", "Forbidden")

	// An owner by a grant (not the workspace's RBAC admin) manages grants.
	p.must(t, "alice", org, roleAssignment("carol-owner", "carol", "owner"), "create", "-f", "-")
	p.eventuallyAs(t, "carol (owner by a grant) to grant gina membership", true, "carol", org, "create", "--raw",
		"/clusters/"+org+"/apis/core.platform-mesh.io/v1alpha1/roleassignments", "-f", "testdata/gina-member.json")
	p.runMust(t, "carol", org, "", "delete", "--raw", "/clusters/"+org+"/apis/core.platform-mesh.io/v1alpha1/roleassignments/gina-member")
	p.must(t, "alice", org, "", "delete", "roleassignment", "carol-owner")
	p.eventuallyAs(t, "carol to be refused grants once her grant is deleted", false, "carol", org, "get", "--raw", "/clusters/"+org+"/apis/core.platform-mesh.io/v1alpha1/roleassignments")

	// A grant in an account workspace applies to that account only.
	p.must(t, "alice", team, roleAssignment("hank-member", "hank", "member"), "create", "-f", "-")
	p.must(t, "alice", team, "", "wait", "--for=condition=Ready", "roleassignment/hank-member", "--timeout=60s")
	p.eventuallyAs(t, "hank to read the grants of team-a", true, "hank", team, "get", "--raw", "/clusters/"+team+"/apis/core.platform-mesh.io/v1alpha1/roleassignments")
	out, err = p.run(t, "hank", org, "", "get", "--raw", "/clusters/"+org+"/apis/core.platform-mesh.io/v1alpha1/roleassignments")
	framework.RequireFails(t, "", out, err, "hank (member of team-a) reading grantorg's grants", "Forbidden")

	// Another organization's owner grants nothing here, by any field.
	p.runMust(t, "dave", "root:orgs", account("daveorg", "org"), "create", "-f", "-")
	p.runMust(t, "dave", "root:orgs", "", "wait", "--for=condition=Ready", "account/daveorg", "--timeout=120s")
	// (a raw POST: dave may not even read grantorg's discovery)
	out, err = p.run(t, "dave", org, `{"apiVersion":"core.platform-mesh.io/v1alpha1","kind":"RoleAssignment","metadata":{"name":"dave-owner"},"spec":{"subject":{"kind":"User","name":"dave"},"role":"owner"}}`,
		"create", "--raw", "/clusters/"+org+"/apis/core.platform-mesh.io/v1alpha1/roleassignments", "-f", "-")
	framework.RequireFails(t, "", out, err, "dave (owner of daveorg) granting himself grantorg", "Forbidden")
	const daveOrg = "root:orgs:daveorg"
	p.eventuallyAs(t, "dave to list the accounts of his organization", true, "dave", daveOrg, "get", "accounts")
	// Fields naming alice's organization, account, cluster or store are
	// no part of the kind (pruned): the grant is on daveorg.
	forged := roleAssignment("into-grantorg", "dave", "owner") + fmt.Sprintf(
		"  account: grantorg\n  organization: grantorg\n  cluster: %s\n  storeId: %s\n  object: %s\n", origin, storeID, fga.AccountObject(origin, "grantorg"))
	p.runMust(t, "dave", daveOrg, forged, "create", "--validate=false", "-f", "-")
	p.runMust(t, "dave", daveOrg, "", "wait", "--for=condition=Ready", "roleassignment/into-grantorg", "--timeout=60s")
	got := p.runMust(t, "dave", daveOrg, "", "get", "roleassignment", "into-grantorg", "-o", "jsonpath={.status.tuple.object}")
	if strings.Contains(got, "grantorg") {
		t.Fatalf("dave's RoleAssignment in daveorg was written on %s", got)
	}
	out, err = p.run(t, "dave", org, "", "get", "configmaps", "-n", "apps")
	framework.RequireFails(t, "", out, err, "dave after his forged grant", "Forbidden")

	// Every edit of the grants leaves alice's ownership alone.
	p.must(t, "alice", org, "", "patch", "roleassignment", "bob-member", "--type=merge", "-p", `{"spec":{"subject":{"name":"erin"}}}`)
	p.eventually(t, "bob to be refused once his grant names erin", false, "bob", org, "get", "configmaps", "-n", "apps")
	p.eventuallyAs(t, "erin to read once the grant names her", true, "erin", org, "get", "configmaps", "-n", "apps")
	aliceOwns("a merge patch of a RoleAssignment")
	p.must(t, "alice", org, "", "patch", "roleassignment", "bob-member", "--type=json", "-p", `[{"op":"replace","path":"/spec/subject/name","value":"bob"}]`)
	p.eventually(t, "bob to read again after the JSON patch", true, "bob", org, "get", "configmaps", "-n", "apps")
	p.eventuallyAs(t, "erin to be refused after the JSON patch", false, "erin", org, "get", "configmaps", "-n", "apps")
	aliceOwns("a JSON patch of a RoleAssignment")
	// A grant of alice herself, deleted: her founder's ownership stays.
	p.must(t, "alice", org, roleAssignment("alice-owner", "alice", "owner"), "create", "-f", "-")
	p.must(t, "alice", org, "", "wait", "--for=condition=Ready", "roleassignment/alice-owner", "--timeout=60s")
	p.must(t, "alice", org, "", "delete", "roleassignment", "alice-owner")
	aliceOwns("deleting a RoleAssignment of alice as owner")
	// A grant whose status claims alice's owner tuple: deleting it
	// deletes no such tuple (status is not trusted).
	p.must(t, "alice", org, roleAssignment("claims-founder", "frank", "member"), "create", "-f", "-")
	p.must(t, "alice", org, "", "wait", "--for=condition=Ready", "roleassignment/claims-founder", "--timeout=60s")
	role := fga.OwnerRole(origin, "grantorg")
	for _, tu := range fga.AccountTuples(origin, "grantorg", "alice", "", "") {
		patch := fmt.Sprintf(`{"status":{"tuple":{"object":%q,"relation":%q,"user":%q}}}`, tu.Object, tu.Relation, tu.User)
		p.must(t, "alice", org, "", "patch", "roleassignment", "claims-founder", "--subresource=status", "--type=merge", "-p", patch)
		p.must(t, "alice", org, "", "delete", "roleassignment", "claims-founder")
		p.must(t, "alice", org, roleAssignment("claims-founder", "frank", "member"), "create", "-f", "-")
		p.must(t, "alice", org, "", "wait", "--for=condition=Ready", "roleassignment/claims-founder", "--timeout=60s")
	}
	if ts, err := f.Read(context.Background(), storeID, role); err != nil || !slices.Contains(ts, corev1alpha1.Tuple{Object: role, Relation: fga.RelationAssignee, User: fga.UserID("alice")}) {
		t.Fatalf("alice's owner role tuples after deleting grants whose status claimed them: %v %v", ts, err)
	}
	aliceOwns("deleting grants whose status claimed her owner tuples")

	// Revoke, and grant again: measured.
	for i := range 3 {
		start = time.Now()
		p.must(t, "alice", org, "", "delete", "roleassignment", "bob-member")
		revokes = append(revokes, latency(t, bob, start, false, "bob to be refused once his grant is deleted"))
		aliceOwns("deleting bob's grant")
		if i == 2 {
			break
		}
		start = time.Now()
		p.must(t, "alice", org, roleAssignment("bob-member", "bob", "member"), "create", "-f", "-")
		grants = append(grants, latency(t, bob, start, true, "bob to read once granted again"))
	}
	t.Logf("grant (kubectl create returns .. bob's first allowed list): %v", grants)
	t.Logf("revoke (kubectl delete returns .. bob's first refused list): %v", revokes)
}

// orgStore is an OpenFGA client of the platform and, read from the
// AccountInfo of workspace org, the organization's origin cluster and
// store id.
func (p *platform) orgStore(t *testing.T, org string) (*fgaclient.Client, string, string) {
	t.Helper()
	key, err := keyfile.Read(p.env["OPENFGA_PRESHARED_KEY_FILE"])
	if err != nil {
		t.Fatal(err)
	}
	f, err := fgaclient.New(p.env["OPENFGA_URL"], fgaclient.WithPresharedKey(key))
	if err != nil {
		t.Fatal(err)
	}
	origin := strings.TrimSpace(p.must(t, "alice", org, "", "get", "accountinfo", "account", "-o", "jsonpath={.spec.account.originClusterId}"))
	storeID := strings.TrimSpace(p.must(t, "alice", org, "", "get", "accountinfo", "account", "-o", "jsonpath={.spec.fga.store.id}"))
	return f, origin, storeID
}

// founderOwns returns a check, failing the test, that user still owns the
// organization's Account name in OpenFGA after what happened.
func (p *platform) founderOwns(t *testing.T, f *fgaclient.Client, origin, storeID, user, name string) func(after string) {
	return func(after string) {
		t.Helper()
		ok, err := f.Check(context.Background(), storeID, corev1alpha1.Tuple{Object: fga.AccountObject(origin, name), Relation: "owner", User: fga.UserID(user)})
		if err != nil || !ok {
			t.Fatalf("after %s %s is no longer owner of %s in OpenFGA (allowed=%v, %v)", after, user, name, ok, err)
		}
	}
}
