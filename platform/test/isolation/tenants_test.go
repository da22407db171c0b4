package isolation

import (
	"context"
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// org is one organization as its owner set it up: its workspace, an
// account in it, a member granted through the organization's Store, a
// ServiceAccount, and data planted in both workspaces.
type org struct {
	name       string
	owner      string // alice or bob
	ownerToken string
	path       string // root:orgs:<name>
	cluster    string
	shard      string
	storeID    string
	origin     string // cluster holding the org's Account (root:orgs)

	account        string // root:orgs:<name>:<account>
	accountCluster string
	accountShard   string

	member      string // oidc-<name>, member of the org through a Store tuple
	memberToken string
	// memberGranted: the member's grant took (see grantMember).
	memberGranted bool
	finding       string // what went wrong in setting the org up, reported after
	sa            string // the ServiceAccount apps/robot of the org workspace
	saToken       string

	marker string // the value of the planted secret and configmap
}

// ws is one workspace a probe targets.
type ws struct{ path, cluster, shard string }

func (o *org) orgWS() ws     { return ws{o.path, o.cluster, o.shard} }
func (o *org) accountWS() ws { return ws{o.account, o.accountCluster, o.accountShard} }

// fgaObject is the org's Account in OpenFGA.
func (o *org) fgaObject() string { return "core_platform-mesh_io_account:" + o.origin + "/" + o.name }

// tenants is everything the probes need to know about the platform's
// tenants, as an attacker would: every name and id is readable by some
// user (the premise), so the probes may use them.
type tenants struct {
	orgsCluster string // root:orgs
	pmsCluster  string // root:platform-mesh-system
	acme, bob   *org
	// cobalt lives with its accounts on shard b, founded by a signed-in
	// OIDC user; acme and bobcorp live on the root shard.
	cobalt   *org
	eveToken string // oidc-eve, signed in, in no organization

	// Sacrificial accounts of acme for the takeovers that destroy or
	// redirect a workspace, bob's account whose LogicalCluster he
	// rewrites, and the one whose AccountInfo he rewrites and deletes.
	spare3, spare4 ws
	lab, decoy     ws
}

const (
	ns         = "apps"
	secretName = "dbcreds"
	cmName     = "settings"
)

// setupTenants founds the organizations acme (alice) and bobcorp (bob) on
// the root shard with accounts on shard b, and cobalt (oidc-frank) with
// its accounts on shard b; grants each a member, makes a ServiceAccount in
// each and plants data.
func setupTenants(t *testing.T, ctx context.Context, p *platform) *tenants {
	t.Helper()
	tn := &tenants{eveToken: p.oidcToken("eve")}
	tn.acme = &org{name: "acme", owner: "alice", ownerToken: p.tokens["alice"], member: "oidc-carol", memberToken: p.oidcToken("carol"), marker: "acme-" + randomHex(8)}
	tn.bob = &org{name: "bobcorp", owner: "bob", ownerToken: p.tokens["bob"], member: "oidc-dave", memberToken: p.oidcToken("dave"), marker: "bobcorp-" + randomHex(8)}
	tn.cobalt = &org{name: "cobalt", owner: "oidc-frank", ownerToken: p.oidcToken("frank"), member: "oidc-grace", memberToken: p.oidcToken("grace"), marker: "cobalt-" + randomHex(8)}
	orgs := []*org{tn.acme, tn.bob, tn.cobalt}
	for _, o := range orgs {
		o.path = "root:orgs:" + o.name
	}

	// acme and bobcorp on the root shard; then, with the root shard
	// unschedulable, cobalt and every account on shard b (pinned the way an
	// admin does: docs/sharding.md).
	p.setUnschedulable(t, ctx, "b", true)
	parallel(t, orgs[:2], func(o *org) { p.createAccount(t, ctx, o.ownerToken, "root:orgs", o.name, "org") })
	p.setUnschedulable(t, ctx, "b", false)
	p.setUnschedulable(t, ctx, "root", true)
	type acct struct {
		o    *org
		name string
	}
	accounts := []acct{{tn.acme, "team"}, {tn.acme, "spare3"}, {tn.acme, "spare4"}, {tn.bob, "lab"}, {tn.bob, "bteam"}, {tn.bob, "decoy"}, {tn.cobalt, ""}}
	parallel(t, accounts, func(a acct) {
		if a.o == tn.cobalt {
			p.createAccount(t, ctx, a.o.ownerToken, "root:orgs", a.o.name, "org")
			p.createAccount(t, ctx, a.o.ownerToken, a.o.path, "cteam", "account")
			return
		}
		p.createAccount(t, ctx, a.o.ownerToken, a.o.path, a.name, "account")
	})
	p.setUnschedulable(t, ctx, "root", false)

	tn.orgsCluster = p.clusterOf(t, ctx, "root", "orgs").cluster
	tn.pmsCluster = p.clusterOf(t, ctx, "root", "platform-mesh-system").cluster
	for _, o := range orgs {
		w := p.clusterOf(t, ctx, "root:orgs", o.name)
		o.path, o.cluster, o.shard = w.path, w.cluster, w.shard
		o.origin = tn.orgsCluster
	}
	tn.acme.account, tn.bob.account, tn.cobalt.account = tn.acme.path+":team", tn.bob.path+":bteam", tn.cobalt.path+":cteam"
	if tn.cobalt.shard != "b" {
		t.Fatalf("cobalt landed on shard %q, not b", tn.cobalt.shard)
	}
	for _, o := range orgs {
		w := p.clusterOf(t, ctx, o.path, strings.TrimPrefix(o.account, o.path+":"))
		o.accountCluster, o.accountShard = w.cluster, w.shard
	}
	tn.spare3 = p.clusterOf(t, ctx, tn.acme.path, "spare3")
	tn.spare4 = p.clusterOf(t, ctx, tn.acme.path, "spare4")
	tn.lab = p.clusterOf(t, ctx, tn.bob.path, "lab")
	tn.decoy = p.clusterOf(t, ctx, tn.bob.path, "decoy")

	parallel(t, orgs, func(o *org) {
		var store struct {
			Status struct{ StoreID string }
		}
		eventually(t, 60*time.Second, "the Store of "+o.name, func() (bool, string) {
			a := p.admin(ctx, http.MethodGet, "/clusters/root:orgs/apis/core.platform-mesh.io/v1alpha1/stores/"+o.name, nil)
			_ = a.decode(&store)
			return store.Status.StoreID != "", a.String()
		})
		o.storeID = store.Status.StoreID
		p.plant(t, ctx, o)
		p.grantMember(t, ctx, o)
		p.makeServiceAccount(t, ctx, o)
	})
	for _, o := range orgs {
		if o.finding != "" {
			// Not a leak but a denial: an org on shard b once never wrote
			// its Store's tuples (the security-operator discovered it on
			// the root shard, which refuses clusters it does not host).
			t.Errorf("%s", o.finding)
		}
		t.Logf("tenant %s: %s (shard %s), %s %s (shard %s)", o.name, o.cluster, o.shard, o.account, o.accountCluster, o.accountShard)
	}
	t.Logf("root:orgs %s", tn.orgsCluster)
	return tn
}

// parallel runs f for each item at once and waits for all. f may fail
// the test (t.Fatalf ends only its own goroutine, which is done then);
// parallel stops the test when any did.
func parallel[T any](t *testing.T, items []T, f func(T)) {
	t.Helper()
	var wg sync.WaitGroup
	for _, it := range items {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(it)
		}()
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
}

// setUnschedulable marks a shard (un)schedulable, as an admin pins where
// new workspaces go (docs/sharding.md).
func (p *platform) setUnschedulable(t *testing.T, ctx context.Context, shard string, on bool) {
	t.Helper()
	var value any
	if on {
		value = "true"
	}
	p.must(t, ctx, "marking shard "+shard, call{method: http.MethodPatch, url: p.proxy + "/clusters/root/apis/core.kcp.io/v1alpha1/shards/" + shard,
		token: p.tokens["shard-admin"], body: map[string]any{"metadata": map[string]any{"annotations": map[string]any{"experimental.core.kcp.io/unschedulable": value}}}})
}

// createAccount creates an Account as the user (retrying while the
// user's rights in a new workspace reach the authorizer) and waits until
// it is Ready.
func (p *platform) createAccount(t *testing.T, ctx context.Context, token, parent, name, typ string) {
	t.Helper()
	base := p.proxy + "/clusters/" + parent + "/apis/core.platform-mesh.io/v1alpha1/accounts"
	body := map[string]any{"apiVersion": "core.platform-mesh.io/v1alpha1", "kind": "Account", "metadata": map[string]any{"name": name},
		"spec": map[string]any{"type": typ, "displayName": name}}
	eventually(t, 60*time.Second, "creating Account "+parent+":"+name, func() (bool, string) {
		a := p.do(ctx, call{method: http.MethodPost, url: base, token: token, body: body})
		return a.ok() || a.code == http.StatusConflict, a.String()
	})
	eventually(t, 3*time.Minute, "Account "+parent+":"+name+" Ready", func() (bool, string) {
		a := p.do(ctx, call{method: http.MethodGet, url: base + "/" + name, token: token})
		var acc struct {
			Status struct{ Conditions []condition }
		}
		_ = a.decode(&acc)
		return conditionTrue(acc.Status.Conditions, "Ready"), a.String()
	})
}

type condition struct {
	Type, Status, Reason, Message string
	ObservedGeneration            int64
}

func conditionTrue(cs []condition, typ string) bool {
	for _, c := range cs {
		if c.Type == typ && c.Status == "True" {
			return true
		}
	}
	return false
}

// clusterOf reads a workspace's logical cluster and shard as the admin.
func (p *platform) clusterOf(t *testing.T, ctx context.Context, parent, name string) ws {
	t.Helper()
	var w struct {
		Metadata struct{ Annotations map[string]string }
		Spec     struct{ Cluster string }
	}
	eventually(t, 60*time.Second, "the logical cluster of "+parent+":"+name, func() (bool, string) {
		a := p.admin(ctx, http.MethodGet, "/clusters/"+parent+"/apis/tenancy.kcp.io/v1alpha1/workspaces/"+name, nil)
		_ = a.decode(&w)
		return w.Spec.Cluster != "", a.String()
	})
	return ws{path: parent + ":" + name, cluster: w.Spec.Cluster, shard: w.Metadata.Annotations["core.kcp.io/shard"]}
}

// plant creates namespace apps, secret dbcreds and configmap settings in
// the org's and the account's workspace, as the owner.
func (p *platform) plant(t *testing.T, ctx context.Context, o *org) {
	t.Helper()
	for _, w := range []string{o.path, o.account} {
		base := p.proxy + "/clusters/" + w + "/api/v1"
		for _, obj := range []struct {
			url  string
			body map[string]any
		}{
			{base + "/namespaces", map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}},
			{base + "/namespaces/" + ns + "/secrets", map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": secretName},
				"data": map[string]any{"password": base64.StdEncoding.EncodeToString([]byte(o.marker))}}},
			{base + "/namespaces/" + ns + "/configmaps", map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": cmName},
				"data": map[string]any{"owner": o.marker}}},
		} {
			eventually(t, 60*time.Second, o.owner+" creating "+obj.url, func() (bool, string) {
				a := p.do(ctx, call{method: http.MethodPost, url: obj.url, token: o.ownerToken, body: obj.body})
				return a.ok() || a.code == http.StatusConflict, a.String()
			})
		}
	}
}

// grantMember makes o.member a member of the organization the documented
// way: a tuple in the org's Store (docs/authorization.md), written by the
// admin, and waits until the member may read the org's namespaces.
func (p *platform) grantMember(t *testing.T, ctx context.Context, o *org) {
	t.Helper()
	url := "/clusters/root:orgs/apis/core.platform-mesh.io/v1alpha1/stores/" + o.name
	// The member's name is plain (prefix "oidc-", no ":"), so its OpenFGA
	// id is "user:<name>" in every spelling of the ids.
	tuple := map[string]any{"object": o.fgaObject(), "relation": "member", "user": "user:" + o.member}
	eventually(t, 30*time.Second, "granting "+o.member+" membership of "+o.name, func() (bool, string) {
		var store map[string]any
		a := p.admin(ctx, http.MethodGet, url, nil)
		if err := a.decode(&store); err != nil {
			return false, a.String()
		}
		spec, _ := store["spec"].(map[string]any)
		tuples, _ := spec["tuples"].([]any)
		spec["tuples"] = append(tuples, tuple)
		a = p.admin(ctx, http.MethodPut, url, store)
		return a.ok(), a.String()
	})
	// A membership that does not take is a finding of its own (an error
	// reported after setup): the probes still run, the member then a mere
	// outsider.
	deadline := time.Now().Add(60 * time.Second)
	for {
		a := p.do(ctx, call{method: http.MethodGet, url: p.proxy + "/clusters/" + o.path + "/api/v1/namespaces/" + ns + "/configmaps", token: o.memberToken})
		if a.ok() {
			o.memberGranted = true
			return
		}
		if time.Now().After(deadline) {
			info := p.admin(ctx, http.MethodGet, "/clusters/"+o.path+"/apis/core.platform-mesh.io/v1alpha1/accountinfos/account", nil)
			o.finding = fmt.Sprintf("FINDING: %s, granted membership of %s (shard %s) by a Store tuple (object %s), still cannot read there after 60s: %s; its AccountInfo: %s",
				o.member, o.name, o.shard, o.fgaObject(), a, string(info.body))
			return
		}
		time.Sleep(300 * time.Millisecond)
	}
}

// makeServiceAccount creates apps/robot in the org workspace and a token
// for it; acme's robot may view apps, bobcorp's is bob's cluster-admin.
func (p *platform) makeServiceAccount(t *testing.T, ctx context.Context, o *org) {
	t.Helper()
	base := p.proxy + "/clusters/" + o.path
	p.must(t, ctx, "creating the ServiceAccount", call{method: http.MethodPost, url: base + "/api/v1/namespaces/" + ns + "/serviceaccounts", token: o.ownerToken,
		body: map[string]any{"apiVersion": "v1", "kind": "ServiceAccount", "metadata": map[string]any{"name": "robot"}}})
	subject := []any{map[string]any{"kind": "ServiceAccount", "name": "robot", "namespace": ns}}
	if o.owner == "alice" {
		p.must(t, ctx, "binding the ServiceAccount", call{method: http.MethodPost, url: base + "/apis/rbac.authorization.k8s.io/v1/namespaces/" + ns + "/rolebindings", token: o.ownerToken,
			body: map[string]any{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": map[string]any{"name": "robot-view"},
				"roleRef": map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"}, "subjects": subject}})
	} else {
		p.must(t, ctx, "binding the ServiceAccount", call{method: http.MethodPost, url: base + "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", token: o.ownerToken,
			body: map[string]any{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": map[string]any{"name": "robot-admin"},
				"roleRef": map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-admin"}, "subjects": subject}})
	}
	a := p.must(t, ctx, "a token for the ServiceAccount", call{method: http.MethodPost, url: base + "/api/v1/namespaces/" + ns + "/serviceaccounts/robot/token", token: o.ownerToken,
		body: map[string]any{"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": map[string]any{"expirationSeconds": 3600}}})
	var tr struct{ Status struct{ Token string } }
	if err := a.decode(&tr); err != nil || tr.Status.Token == "" {
		t.Fatalf("TokenRequest for %s robot: %v %s", o.name, err, a)
	}
	o.saToken, o.sa = tr.Status.Token, "system:serviceaccount:"+ns+":robot"
	eventually(t, 30*time.Second, o.name+"'s robot reading its namespace", func() (bool, string) {
		a := p.do(ctx, call{method: http.MethodGet, url: base + "/api/v1/namespaces/" + ns + "/configmaps", token: o.saToken})
		return a.ok(), a.String()
	})
}

func randomHex(n int) string {
	const digits = "0123456789abcdef"
	b := make([]byte, n)
	for i := range b {
		b[i] = digits[rand.IntN(16)]
	}
	return string(b)
}
