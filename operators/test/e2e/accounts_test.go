package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

const readyTimeout = 90 * time.Second

// accountYAML is what a user writes. Whatever spec.creator says, the
// platform's admission policy replaces it with the requesting user.
func accountYAML(name, typ, creator string) string {
	return fmt.Sprintf(`apiVersion: core.platform-mesh.io/v1alpha1
kind: Account
metadata:
  name: %s
spec:
  type: %s
  displayName: %s
  creator: %s
`, name, typ, strings.ToUpper(name[:1])+name[1:], creator)
}

// jsonpath reads a field with kubectl get, "" when the object is not there.
func jsonpath(t *testing.T, k *framework.Kubectl, path string, args ...string) (string, error) {
	t.Helper()
	out, errOut, err := k.RunErr(t, append(args, "-o", "jsonpath="+path)...)
	if err != nil {
		return "", fmt.Errorf("%v: %s", err, strings.TrimSpace(errOut))
	}
	return out, nil
}

// waitAccountReady waits for the Account's Ready condition, failing with
// its conditions.
func waitAccountReady(t *testing.T, k *framework.Kubectl, name string) {
	t.Helper()
	framework.Eventually(t, readyTimeout, 500*time.Millisecond, "Account "+name+" to be Ready", func() (bool, string) {
		status, err := jsonpath(t, k, `{.status.conditions[?(@.type=="Ready")].status}`, "get", "account", name)
		if err != nil {
			return false, err.Error()
		}
		conds, _ := jsonpath(t, k, `{range .status.conditions[*]}{.type}={.status} ({.reason}: {.message}){"\n"}{end}`, "get", "account", name)
		return status == "True", conds
	})
}

func waitGone(t *testing.T, k *framework.Kubectl, what string, args ...string) {
	t.Helper()
	framework.Eventually(t, readyTimeout, 500*time.Millisecond, what+" to be gone", func() (bool, string) {
		out, errOut, err := k.RunErr(t, args...)
		if err != nil && strings.Contains(errOut, "NotFound") || err != nil && strings.Contains(errOut, "not found") {
			return true, ""
		}
		return false, fmt.Sprintf("still there: %s %s", strings.TrimSpace(out), strings.TrimSpace(errOut))
	})
}

// TestOrganizationAndAccount is the walk-through of docs/accounts.md: alice
// founds acme, gets its workspace with an AccountInfo, creates team-a in it,
// and deleting acme removes the whole tree.
func TestOrganizationAndAccount(t *testing.T) {
	s := platform(t)
	alice := s.KubectlAsUser(t, "alice", "root:orgs")

	alice.RunStdin(t, accountYAML("acme", "org", "alice"), "create", "-f", "-")
	waitAccountReady(t, alice, "acme")
	got := alice.Run(t, "get", "account", "acme")
	for _, want := range []string{"TYPE", "DISPLAY NAME", "READY", "acme", "org", "Acme", "True"} {
		if !strings.Contains(got, want) {
			t.Errorf("kubectl get account acme lacks %q:\n%s", want, got)
		}
	}
	if phase, err := jsonpath(t, alice, "{.status.phase}", "get", "workspace", "acme"); err != nil || phase != "Ready" {
		t.Fatalf("workspace root:orgs:acme phase = %q (%v), want Ready", phase, err)
	}
	if typ, _ := jsonpath(t, alice, "{.spec.type.path}:{.spec.type.name}", "get", "workspace", "acme"); typ != "root:orgs:acme-org" {
		t.Errorf("workspace type = %q, want root:orgs:acme-org", typ)
	}
	admin := s.KubectlFor("root:orgs")
	labels := admin.Run(t, "get", "workspacetypes", "-l", "core.platform-mesh.io/org=acme", "-o", "name")
	if !strings.Contains(labels, "acme-org") || !strings.Contains(labels, "acme-account") {
		t.Errorf("workspace types labelled for acme: %q", labels)
	}

	// alice is admin of her organization's workspace: she reads its AccountInfo.
	inAcme := s.KubectlAsUser(t, "alice", "root:orgs:acme")
	info, err := jsonpath(t, inAcme, "{.spec.account.name}|{.spec.account.path}|{.spec.organization.name}|{.spec.parentAccount}", "get", "accountinfo", "account")
	if err != nil || info != "acme|root:orgs:acme|acme|" {
		t.Fatalf("AccountInfo in root:orgs:acme = %q (%v), want acme|root:orgs:acme|acme| (an org is its own organization, no parent)", info, err)
	}
	// She is cluster-admin there through the binding the operator made as
	// the workspace's initializer, with its scoped credential only.
	if can := strings.TrimSpace(inAcme.Run(t, "auth", "can-i", "*", "*")); can != "yes" {
		t.Errorf("alice may not do everything in root:orgs:acme: %q", can)
	}
	subjects, err := jsonpath(t, s.KubectlFor("root:orgs:acme"), "{.roleRef.name}:{.subjects[*].name}", "get", "clusterrolebinding", "meshplane:account-creator")
	if err != nil || subjects != "cluster-admin:alice" {
		t.Errorf("ClusterRoleBinding meshplane:account-creator in root:orgs:acme = %q (%v), want cluster-admin:alice", subjects, err)
	}
	if !s.External {
		who := strings.TrimSpace((&framework.Kubectl{Kubeconfig: op.kubeconfig}).Run(t, "auth", "whoami", "-o", "jsonpath={.status.userInfo.username}"))
		if who != "system:serviceaccount:default:account-operator" {
			t.Errorf("the operator runs as %q, want its ServiceAccount", who)
		}
	}
	// bob is not.
	if _, errOut, err := s.KubectlAsUser(t, "bob", "root:orgs:acme").RunErr(t, "get", "accounts"); err == nil || !strings.Contains(errOut, "Forbidden") {
		t.Errorf("bob listed accounts in acme's workspace: %v %s", err, errOut)
	}

	inAcme.RunStdin(t, accountYAML("team-a", "account", "alice"), "create", "-f", "-")
	waitAccountReady(t, inAcme, "team-a")
	if typ, _ := jsonpath(t, inAcme, "{.spec.type.path}:{.spec.type.name}", "get", "workspace", "team-a"); typ != "root:orgs:acme-account" {
		t.Errorf("team-a's workspace type = %q, want root:orgs:acme-account", typ)
	}
	inTeam := s.KubectlAsUser(t, "alice", "root:orgs:acme:team-a")
	info, err = jsonpath(t, inTeam, "{.spec.account.name}|{.spec.account.path}|{.spec.organization.name}|{.spec.parentAccount.name}|{.spec.parentAccount.path}", "get", "accountinfo", "account")
	if err != nil || info != "team-a|root:orgs:acme:team-a|acme|acme|root:orgs:acme" {
		t.Fatalf("AccountInfo in root:orgs:acme:team-a = %q (%v), want acme as organization and parent", info, err)
	}
	// Its type extends root:universal, as Platform Mesh's account type does:
	// like every such kcp workspace it has the namespace default (so has
	// root:orgs, of the orgs type).
	for _, ws := range []string{"root:orgs:acme:team-a", "root:orgs"} {
		if _, errOut, err := s.KubectlFor(ws).RunErr(t, "get", "namespace", "default"); err != nil {
			t.Errorf("workspace %s has no namespace default: %v %s", ws, err, errOut)
		}
	}

	// An organization belongs in root:orgs: one inside acme is refused at
	// admission with the rule (TestOrgPlacementRefused has the variants).
	if _, errOut, err := inAcme.RunStdinErr(t, accountYAML("nested", "org", "alice"), "create", "-f", "-"); err == nil {
		t.Errorf("an Account of type org was admitted inside acme")
	} else if !strings.Contains(errOut, "is invalid") || !strings.Contains(errOut, "root:orgs") {
		t.Errorf("creating an Account of type org inside acme: stderr %q; want a 422 naming root:orgs", errOut)
	}
	if ws, _, _ := inAcme.RunErr(t, "get", "workspaces", "-o", "name"); strings.Contains(ws, "nested") {
		t.Errorf("a workspace was made for the refused org: %s", ws)
	}

	// Deleting acme removes its whole tree. (alice may not delete it: the
	// orgs role lets users found organizations; who may delete one is
	// decided through OpenFGA later. The admin deletes it here.)
	admin.Run(t, "delete", "account", "acme", "--wait=false")
	waitGone(t, admin, "Account acme", "get", "account", "acme")
	waitGone(t, admin, "workspace acme", "get", "workspace", "acme")
	waitGone(t, admin, "workspace type acme-org", "get", "workspacetype", "acme-org")
	waitGone(t, admin, "workspace type acme-account", "get", "workspacetype", "acme-account")
	waitGone(t, s.KubectlFor("root:orgs:acme:team-a"), "workspace root:orgs:acme:team-a", "get", "accountinfo", "account")
}

// TestAccountPlacementRefused: an Account of type account created directly
// in root:orgs (where only organizations live) is refused at admission with
// the rule in the message; it used to be admitted and wait forever.
func TestAccountPlacementRefused(t *testing.T) {
	s := platform(t)
	alice := s.KubectlAsUser(t, "alice", "root:orgs")
	name := framework.UniqueName("stray")
	_, errOut, err := alice.RunStdinErr(t, accountYAML(name, "account", "alice"), "create", "-f", "-")
	if err == nil {
		t.Cleanup(func() { s.KubectlFor("root:orgs").RunErr(t, "delete", "account", name, "--wait=false") })
	}
	want := "only organizations (type org) live here"
	if err == nil || !strings.Contains(errOut, want) {
		t.Errorf("creating Account %s of type account in root:orgs: err %v, stderr %q; want it refused with %q", name, err, errOut, want)
	}
}

// TestOrgPlacementRefused: an Account of type org anywhere but in root:orgs
// (inside an organization, inside an account) is refused at admission with
// the rule in the message, a 422, even for the platform's admin; it used to
// be admitted and wait forever on a condition. The attack: naming root:orgs'
// logical cluster in the Account's kcp.io/cluster annotation does not get
// it in (the core sets that annotation from the request's cluster).
func TestOrgPlacementRefused(t *testing.T) {
	s := platform(t)
	alice := s.KubectlAsUser(t, "alice", "root:orgs")
	org := framework.UniqueName("place")
	alice.RunStdin(t, accountYAML(org, "org", "alice"), "create", "-f", "-")
	t.Cleanup(func() { s.KubectlFor("root:orgs").RunErr(t, "delete", "account", org, "--wait=false") })
	waitAccountReady(t, alice, org)
	inOrg := s.KubectlFor("root:orgs:" + org)
	inOrg.RunStdin(t, accountYAML("team", "account", "alice"), "create", "-f", "-")
	waitAccountReady(t, inOrg, "team")
	orgsCluster := strings.TrimSpace(s.KubectlFor("root").Run(t, "get", "workspace", "orgs", "-o", "jsonpath={.spec.cluster}"))

	const want = "organizations (type org) are created in root:orgs only"
	forged := strings.Replace(accountYAML("forged", "org", "alice"), "metadata:\n",
		"metadata:\n  annotations:\n    kcp.io/cluster: "+orgsCluster+"\n", 1)
	for _, tc := range []struct {
		where, path, yaml string
	}{
		{"an organization", "root:orgs:" + org, accountYAML("nested", "org", "alice")},
		{"an account", "root:orgs:" + org + ":team", accountYAML("nested", "org", "alice")},
		{"an organization, naming root:orgs' cluster", "root:orgs:" + org, forged},
	} {
		k := s.KubectlFor(tc.path)
		_, errOut, err := k.RunStdinErr(t, tc.yaml, "create", "-f", "-")
		if err == nil {
			t.Errorf("an Account of type org was admitted in %s (%s)", tc.where, tc.path)
			continue
		}
		if tc.yaml == forged && !strings.Contains(errOut, want) && strings.Contains(errOut, "kcp.io/cluster") {
			continue // refused earlier, as a reserved annotation
		}
		if !strings.Contains(errOut, want) || !strings.Contains(errOut, "is invalid") {
			t.Errorf("creating an Account of type org in %s: stderr %q; want a 422 with %q", tc.where, errOut, want)
		}
	}
	// Organizations are still founded in root:orgs.
	other := framework.UniqueName("place")
	alice.RunStdin(t, accountYAML(other, "org", "alice"), "create", "-f", "-")
	t.Cleanup(func() { s.KubectlFor("root:orgs").RunErr(t, "delete", "account", other, "--wait=false") })
}

// TestOperatorKilledMidwayConverges kills the operator with SIGKILL while
// it works on a batch of organizations, restarts it, and checks that every
// organization ends Ready with exactly one workspace, two workspace types
// and one AccountInfo.
func TestOperatorKilledMidwayConverges(t *testing.T) {
	s := platform(t)
	framework.SkipIfExternal(t, "kills the account-operator")
	alice := s.KubectlAsUser(t, "alice", "root:orgs")
	admin := s.KubectlFor("root:orgs")
	prefix := framework.UniqueName("kill")
	var names []string
	var all strings.Builder
	for i := range 6 {
		name := fmt.Sprintf("%s-%d", prefix, i)
		names = append(names, name)
		all.WriteString(accountYAML(name, "org", "alice") + "---\n")
	}
	alice.RunStdin(t, all.String(), "create", "-f", "-")
	// Mid-way: as soon as the first workspace exists.
	framework.Eventually(t, readyTimeout, 50*time.Millisecond, "the operator to start creating workspaces", func() (bool, string) {
		out, _, _ := admin.RunErr(t, "get", "workspaces", "-o", "name")
		return strings.Contains(out, prefix), out
	})
	op.kill9(t)
	op.restart(t)

	for _, name := range names {
		waitAccountReady(t, alice, name)
	}
	ws := admin.Run(t, "get", "workspaces", "-o", "name")
	if n := strings.Count(ws, "/"+prefix+"-"); n != len(names) {
		t.Errorf("%d workspaces named %s-*, want %d:\n%s", n, prefix, len(names), ws)
	}
	for _, name := range names {
		types := admin.Run(t, "get", "workspacetypes", "-l", "core.platform-mesh.io/org="+name, "-o", "name")
		if n := len(strings.Fields(types)); n != 2 {
			t.Errorf("org %s has %d workspace types, want 2: %q", name, n, types)
		}
		infos := s.KubectlFor("root:orgs:"+name).Run(t, "get", "accountinfos", "-o", "name")
		if n := len(strings.Fields(infos)); n != 1 {
			t.Errorf("workspace root:orgs:%s holds %d AccountInfos, want 1: %q", name, n, infos)
		}
	}
	for _, name := range names {
		admin.Run(t, "delete", "account", name, "--wait=false")
	}
	for _, name := range names {
		waitGone(t, admin, "Account "+name, "get", "account", name)
	}
}
