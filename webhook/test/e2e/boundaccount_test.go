package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// gadgetExport is a provider's export of gadgets, and the grant of bind on
// it to every signed-in user (kcp's way: RBAC in the provider workspace).
const gadgetExport = `apiVersion: apis.kcp.io/v1alpha1
kind: APIResourceSchema
metadata:
  name: v1.gadgets.bound.example.dev
spec:
  group: bound.example.dev
  names: {kind: Gadget, listKind: GadgetList, plural: gadgets, singular: gadget}
  scope: Namespaced
  versions:
  - name: v1alpha1
    served: true
    storage: true
    schema:
      type: object
      properties:
        spec: {type: object, x-kubernetes-preserve-unknown-fields: true}
---
apiVersion: apis.kcp.io/v1alpha2
kind: APIExport
metadata:
  name: bound.example.dev
spec:
  resources:
  - {name: gadgets, group: bound.example.dev, schema: v1.gadgets.bound.example.dev, storage: {crd: {}}}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: bind-bound.example.dev
rules:
- {apiGroups: [apis.kcp.io], resources: [apiexports], resourceNames: [bound.example.dev], verbs: [bind]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: bind-bound.example.dev
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: bind-bound.example.dev}
subjects:
- {apiGroup: rbac.authorization.k8s.io, kind: Group, name: "system:authenticated"}
`

const gadgetBinding = `apiVersion: apis.kcp.io/v1alpha2
kind: APIBinding
metadata: {name: gadgets}
spec:
  reference: {export: {path: root:bound-provider, name: bound.example.dev}}
`

const gadget = `apiVersion: bound.example.dev/v1alpha1
kind: Gadget
metadata: {name: %s, namespace: apps}
spec: {size: 1}
`

// TestAccountBoundAPI (issue 23): an export bound only in an account
// workspace (not in its organization's) joins the organization's model:
// bob, made owner of the account by a RoleAssignment there, creates and
// lists the bound gadgets, carol, a member there, lists them; dave, who founded another organization, may
// not list them there, and his own binding of the same export in his
// account serves him, never alice's organization more.
func TestAccountBoundAPI(t *testing.T) {
	p := startPlatform(t)
	const org, team = "root:orgs:boundorg", "root:orgs:boundorg:team-a"

	p.must(t, "base", "root", "apiVersion: tenancy.kcp.io/v1alpha1\nkind: Workspace\nmetadata: {name: bound-provider}\n", "create", "-f", "-")
	p.must(t, "base", "root", "", "wait", "--for=jsonpath={.status.phase}=Ready", "workspace/bound-provider", "--timeout=120s")
	p.must(t, "base", "root:bound-provider", gadgetExport, "apply", "-f", "-")

	p.must(t, "alice", "root:orgs", account("boundorg", "org"), "create", "-f", "-")
	p.must(t, "alice", "root:orgs", "", "wait", "--for=condition=Ready", "account/boundorg", "--timeout=120s")
	p.eventually(t, "alice to list the accounts of her organization", true, "alice", org, "get", "accounts")
	p.must(t, "alice", org, account("team-a", "account"), "create", "-f", "-")
	p.must(t, "alice", org, "", "wait", "--for=condition=Ready", "account/team-a", "--timeout=120s")
	p.eventually(t, "alice to create a namespace in team-a", true, "alice", team, "create", "namespace", "apps")

	// alice binds the export in the account only: bind is hers through the
	// provider's grant to system:authenticated.
	p.must(t, "alice", team, gadgetBinding, "create", "-f", "-")
	p.must(t, "alice", team, "", "wait", "--for=jsonpath={.status.phase}=Bound", "apibinding/gadgets", "--timeout=60s")
	if out, err := p.kubectl(t, "alice", org, "", "get", "apibindings", "-o", "name"); err != nil || strings.Contains(out, "gadgets") {
		t.Fatalf("the org workspace must not bind gadgets: %v %s", err, out)
	}

	p.must(t, "alice", team, roleAssignment("bob-owner", "bob", "owner"), "create", "-f", "-")
	framework.Eventually(t, 90*time.Second, time.Second, "bob to create a gadget in team-a", func() (bool, string) {
		out, err := p.kubectl(t, "bob", team, strings.Replace(gadget, "%s", "g1", 1), "create", "-f", "-")
		return err == nil, out
	})
	if out := p.must(t, "bob", team, "", "get", "gadgets", "-n", "apps", "-o", "name"); !strings.Contains(out, "g1") {
		t.Fatalf("bob lists no gadget g1 in team-a: %s", out)
	}

	// carol, a member of team-a by a RoleAssignment there, lists them.
	p.must(t, "alice", team, roleAssignment("carol-member", "carol", "member"), "create", "-f", "-")
	framework.Eventually(t, 90*time.Second, time.Second, "carol to list gadgets in team-a", func() (bool, string) {
		out, err := p.run(t, "carol", team, "", "get", "gadgets", "-n", "apps", "-o", "name")
		return err == nil && strings.Contains(out, "g1"), out
	})

	// dave founds his own organization and binds the same export in his
	// account: that serves his organization's model, not alice's.
	p.runMust(t, "dave", "root:orgs", strings.Replace(account("daveorg", "org"), "creator: alice", "creator: dave", 1), "create", "-f", "-")
	p.runMust(t, "dave", "root:orgs", "", "wait", "--for=condition=Ready", "account/daveorg", "--timeout=120s")
	p.eventuallyAs(t, "dave to list the accounts of his organization", true, "dave", "root:orgs:daveorg", "get", "accounts")
	p.runMust(t, "dave", "root:orgs:daveorg", strings.Replace(account("lab", "account"), "creator: alice", "creator: dave", 1), "create", "-f", "-")
	p.runMust(t, "dave", "root:orgs:daveorg", "", "wait", "--for=condition=Ready", "account/lab", "--timeout=120s")
	p.runMust(t, "dave", "root:orgs:daveorg:lab", gadgetBinding, "create", "-f", "-")
	p.runMust(t, "dave", "root:orgs:daveorg:lab", "", "wait", "--for=jsonpath={.status.phase}=Bound", "apibinding/gadgets", "--timeout=60s")
	p.eventuallyAs(t, "dave to create a namespace in his account", true, "dave", "root:orgs:daveorg:lab", "create", "namespace", "apps")
	framework.Eventually(t, 90*time.Second, time.Second, "dave to create a gadget in his own account", func() (bool, string) {
		out, err := p.run(t, "dave", "root:orgs:daveorg:lab", strings.Replace(gadget, "%s", "d1", 1), "create", "-f", "-")
		return err == nil, out
	})
	// Raw requests: kubectl's discovery is refused to dave there as well.
	const gadgets = "/apis/bound.example.dev/v1alpha1/namespaces/apps/gadgets"
	out, err := p.run(t, "dave", team, "", "get", "--raw", gadgets)
	framework.RequireFails(t, "", out, err, "dave listing gadgets in alice's team-a", "Forbidden")
	out, err = p.run(t, "dave", team, `{"apiVersion":"bound.example.dev/v1alpha1","kind":"Gadget","metadata":{"name":"d2","namespace":"apps"}}`,
		"create", "--raw", gadgets, "-f", "-")
	framework.RequireFails(t, "", out, err, "dave creating a gadget in alice's team-a", "Forbidden")
}
