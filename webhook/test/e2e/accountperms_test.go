package e2e

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/meshplane/meshplane/apis/fga"
	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// TestMemberCannotDeleteAccount (issue 23): bob, a member of alice's
// organization, reads its Accounts but may not delete, update or patch
// one (the model gave members every verb on Accounts, so bob could delete
// account victim and with it its workspace and data); once bob is an
// owner of the organization he may. Deletes are asked with
// --dry-run=server (authorized like a real one, nothing removed) until
// the last, real one.
func TestMemberCannotDeleteAccount(t *testing.T) {
	p := startPlatform(t)
	const org = "root:orgs:permorg"

	p.must(t, "alice", "root:orgs", account("permorg", "org"), "create", "-f", "-")
	p.must(t, "alice", "root:orgs", "", "wait", "--for=condition=Ready", "account/permorg", "--timeout=120s")
	p.eventually(t, "alice to list the accounts of her organization", true, "alice", org, "get", "accounts")
	p.must(t, "alice", org, account("victim", "account"), "create", "-f", "-")
	p.must(t, "alice", org, "", "wait", "--for=condition=Ready", "account/victim", "--timeout=120s")

	origin := strings.TrimSpace(p.must(t, "alice", org, "", "get", "accountinfo", "account", "-o", "jsonpath={.spec.account.originClusterId}"))
	grant := func(relation string) {
		t.Helper()
		tuple := map[string]string{"object": fga.AccountObject(origin, "permorg"), "relation": relation, "user": fga.UserID("bob")}
		patch, _ := json.Marshal([]map[string]any{{"op": "add", "path": "/spec/tuples/-", "value": tuple}})
		p.must(t, "base", "root:orgs", "", "patch", "stores", "permorg", "--type=json", "-p", string(patch))
	}

	// bob, a member: reads the Accounts, changes none.
	grant(fga.RelationMember)
	p.eventually(t, "bob to list the accounts of permorg once a member", true, "bob", org, "get", "accounts")
	framework.RequireContains(t, p.must(t, "bob", org, "", "get", "account", "victim", "-o", "jsonpath={.spec.type}"), "account", "bob reading victim")
	refused := []struct {
		what string
		args []string
	}{
		{"bob (a member) deleting account victim", []string{"delete", "account", "victim", "--dry-run=server"}},
		{"bob (a member) patching account victim", []string{"patch", "account", "victim", "--type=merge", "-p", `{"spec":{"displayName":"bob was here"}}`}},
	}
	for _, r := range refused {
		out, err := p.kubectl(t, "bob", org, "", r.args...)
		framework.RequireFails(t, "", out, err, r.what, "Forbidden")
	}
	victim := p.must(t, "bob", org, "", "get", "account", "victim", "-o", "yaml")
	out, err := p.kubectl(t, "bob", org, strings.Replace(victim, "displayName: victim", "displayName: bob was here", 1), "replace", "-f", "-")
	framework.RequireFails(t, "", out, err, "bob (a member) replacing account victim (update)", "Forbidden")
	for _, verb := range []string{"delete", "update", "patch"} {
		// The answer is the last line's first word (kubectl warns first
		// that accounts are cluster-scoped).
		out, _ := p.kubectl(t, "bob", org, "", "auth", "can-i", verb, "accounts")
		lines := strings.Split(strings.TrimSpace(out), "\n")
		framework.RequireEqual(t, strings.Fields(lines[len(lines)-1] + " ")[0], "no", "bob: can-i "+verb+" accounts ("+out+")")
	}
	framework.RequireEqual(t, strings.TrimSpace(p.must(t, "bob", org, "", "get", "account", "victim", "-o", "jsonpath={.spec.displayName}")),
		"victim", "victim's display name after bob's refused patch")

	// bob, an owner of the organization: owns its accounts too.
	grant(fga.RelationOwner)
	p.eventually(t, "bob to be allowed to delete victim once an owner", true, "bob", org, "delete", "account", "victim", "--dry-run=server")
	p.must(t, "bob", org, "", "patch", "account", "victim", "--type=merge", "-p", `{"spec":{"displayName":"renamed by an owner"}}`)
	p.must(t, "bob", org, "", "delete", "account", "victim", "--wait=false")
}
