package e2e

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/meshplane/meshplane/apis/fga"
	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// TestRefusalMessages (issue 23): a member refused a write is told what
// was refused (verb, resource, workspace), not that the workspace is
// closed to him; an outsider still is; refusals in root:orgs carry no
// internal line of the webhook ("... is no account workspace").
func TestRefusalMessages(t *testing.T) {
	p := startPlatform(t)
	const org = "root:orgs:msgorg"

	p.must(t, "alice", "root:orgs", account("msgorg", "org"), "create", "-f", "-")
	p.must(t, "alice", "root:orgs", "", "wait", "--for=condition=Ready", "account/msgorg", "--timeout=120s")
	p.eventually(t, "alice to list the accounts of her organization", true, "alice", org, "get", "accounts")

	// In root:orgs bob may found organizations, not delete them.
	out, err := p.kubectl(t, "bob", "root:orgs", "", "delete", "account", "msgorg", "--dry-run=server")
	framework.RequireFails(t, "", out, err, "bob deleting account msgorg in root:orgs", "Forbidden")
	if strings.Contains(out, "no account workspace") {
		t.Errorf("bob's refusal in root:orgs names the webhook's internals: %q", out)
	}

	// An outsider is kept out of the workspace.
	out, err = p.kubectl(t, "bob", org, "", "get", "--raw", "/clusters/"+org+"/apis/core.platform-mesh.io/v1alpha1/accounts")
	framework.RequireFails(t, "", out, err, "bob (an outsider) listing accounts in msgorg", "access to workspace "+org+" denied")

	// A member reads; a write he may not do is named.
	origin := strings.TrimSpace(p.must(t, "alice", org, "", "get", "accountinfo", "account", "-o", "jsonpath={.spec.account.originClusterId}"))
	tuple := map[string]string{"object": fga.AccountObject(origin, "msgorg"), "relation": fga.RelationMember, "user": fga.UserID("bob")}
	patch, _ := json.Marshal([]map[string]any{{"op": "add", "path": "/spec/tuples/-", "value": tuple}})
	p.must(t, "base", "root:orgs", "", "patch", "stores", "msgorg", "--type=json", "-p", string(patch))
	p.eventually(t, "bob to list the accounts of msgorg once a member", true, "bob", org, "get", "accounts")
	out, err = p.kubectl(t, "bob", org, "", "create", "configmap", "bobs", "-n", "default")
	framework.RequireFails(t, "", out, err, "bob (a member) creating a ConfigMap in msgorg",
		"create configmaps in namespace default in workspace "+org+" denied")
	if strings.Contains(out, "access to workspace") {
		t.Errorf("bob, a member who reads msgorg, is told the workspace is closed to him: %q", out)
	}
}
