package e2e

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/meshplane/meshplane/apis/fga"
	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// TestNamespacedGrant (issue 28, OpenFGA object ids): alice grants bob
// secret dbcreds in namespace public of her organization with a Store
// tuple; bob reads it, and not the secret of the same name in namespace
// prod (before namespaced ids both had the id core_secret:<cluster>/dbcreds).
// bob is no member of the organization, so discovery is closed to him: he
// asks with raw requests (whose path kubectl does not prefix with the
// server's).
func TestNamespacedGrant(t *testing.T) {
	p := startPlatform(t)
	const org = "root:orgs:idorg"

	p.must(t, "alice", "root:orgs", account("idorg", "org"), "create", "-f", "-")
	p.must(t, "alice", "root:orgs", "", "wait", "--for=condition=Ready", "account/idorg", "--timeout=120s")
	p.eventually(t, "alice to create a namespace in her organization", true, "alice", org, "create", "namespace", "public")
	p.must(t, "alice", org, "", "create", "namespace", "prod")
	for _, ns := range []string{"public", "prod"} {
		p.must(t, "alice", org, "", "create", "secret", "generic", "dbcreds", "-n", ns, "--from-literal=password="+ns)
	}
	secret := func(ns string) string { return "/clusters/" + org + "/api/v1/namespaces/" + ns + "/secrets/dbcreds" }
	out, err := p.kubectl(t, "bob", org, "", "get", "--raw", secret("public"))
	framework.RequireFails(t, "", out, err, "bob reading public/dbcreds before any grant", "Forbidden")

	cluster := strings.TrimSpace(p.must(t, "alice", org, "", "get", "accountinfo", "account", "-o", "jsonpath={.spec.account.generatedClusterId}"))
	grant := map[string]string{"object": fga.ObjectID(fga.TypeName("", "secret"), cluster, "public", "dbcreds"),
		"relation": fga.RelationMember, "user": fga.UserID("bob")}
	patch, _ := json.Marshal([]map[string]any{{"op": "add", "path": "/spec/tuples/-", "value": grant}})
	p.must(t, "base", "root:orgs", "", "patch", "stores", "idorg", "--type=json", "-p", string(patch))
	p.eventually(t, "bob to read public/dbcreds once granted", true, "bob", org, "get", "--raw", secret("public"))
	framework.RequireContains(t, p.must(t, "bob", org, "", "get", "--raw", secret("public")),
		`"password":"cHVibGlj"`, "bob reading public/dbcreds") // base64 of "public"

	out, err = p.kubectl(t, "bob", org, "", "get", "--raw", secret("prod"))
	framework.RequireFails(t, "", out, err, "bob reading prod/dbcreds with a grant on public/dbcreds", "Forbidden")
	out, err = p.kubectl(t, "bob", org, "", "get", "--raw", "/clusters/"+org+"/api/v1/namespaces/public/secrets")
	framework.RequireFails(t, "", out, err, "bob listing the secrets of public with a grant on one of them", "Forbidden")
	out, err = p.kubectl(t, "bob", org, "", "delete", "--raw", secret("public"))
	framework.RequireFails(t, "", out, err, "bob (a member of the object) deleting public/dbcreds", "Forbidden")
}
