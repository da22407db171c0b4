package isolation

import (
	"encoding/base64"
	"net/http"
	"net/url"
)

// attacker is an identity a probe acts as.
type attacker struct{ name, token string }

// op is one request inside a workspace: a path below /clusters/<x>.
type op struct {
	what, method, path string
	body               any
}

const dryRun = "?dryRun=All"

// readOps are what an outsider must not read in a victim's workspace.
var readOps = []op{
	{"get the planted secret", http.MethodGet, "/api/v1/namespaces/" + ns + "/secrets/" + secretName, nil},
	{"list secrets", http.MethodGet, "/api/v1/namespaces/" + ns + "/secrets", nil},
	{"list secrets of all namespaces", http.MethodGet, "/api/v1/secrets", nil},
	{"watch secrets", http.MethodGet, "/api/v1/namespaces/" + ns + "/secrets?watch=true&timeoutSeconds=1", nil},
	{"get the planted configmap", http.MethodGet, "/api/v1/namespaces/" + ns + "/configmaps/" + cmName, nil},
	{"list namespaces", http.MethodGet, "/api/v1/namespaces", nil},
	{"discovery", http.MethodGet, "/api", nil},
	{"get the AccountInfo", http.MethodGet, "/apis/core.platform-mesh.io/v1alpha1/accountinfos/account", nil},
	{"list Accounts", http.MethodGet, "/apis/core.platform-mesh.io/v1alpha1/accounts", nil},
	{"list ClusterRoleBindings", http.MethodGet, "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", nil},
	{"get the LogicalCluster", http.MethodGet, "/apis/core.kcp.io/v1alpha1/logicalclusters/cluster", nil},
	{"list child Workspaces", http.MethodGet, "/apis/tenancy.kcp.io/v1alpha1/workspaces", nil},
}

// writeOps are what neither an outsider nor a member may write in a
// victim's workspace (dry-run: a refusal is what counts, and the victim
// stays as it is for the other probes).
func writeOps(who string) []op {
	grant := map[string]any{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": map[string]any{"name": "pwned"},
		"roleRef":  map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-admin"},
		"subjects": []any{map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": who}}}
	return []op{
		{"create a configmap", http.MethodPost, "/api/v1/namespaces/" + ns + "/configmaps" + dryRun,
			map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "pwned"}}},
		{"overwrite the planted secret", http.MethodPatch, "/api/v1/namespaces/" + ns + "/secrets/" + secretName + dryRun,
			map[string]any{"data": map[string]any{"password": base64.StdEncoding.EncodeToString([]byte("pwned"))}}},
		{"delete the namespace", http.MethodDelete, "/api/v1/namespaces/" + ns + dryRun, nil},
		{"bind itself to cluster-admin", http.MethodPost, "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings" + dryRun, grant},
		{"mint a token for the victim's ServiceAccount", http.MethodPost, "/api/v1/namespaces/" + ns + "/serviceaccounts/robot/token" + dryRun,
			map[string]any{"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": map[string]any{}}},
		{"rewrite the AccountInfo's store id", http.MethodPatch, "/apis/core.platform-mesh.io/v1alpha1/accountinfos/account" + dryRun,
			map[string]any{"spec": map[string]any{"fga": map[string]any{"store": map[string]any{"id": "01HZZZZZZZZZZZZZZZZZZZZZZZ"}}}}},
		{"delete the LogicalCluster", http.MethodDelete, "/apis/core.kcp.io/v1alpha1/logicalclusters/cluster" + dryRun, nil},
		{"create an Account", http.MethodPost, "/apis/core.platform-mesh.io/v1alpha1/accounts" + dryRun,
			map[string]any{"apiVersion": "core.platform-mesh.io/v1alpha1", "kind": "Account", "metadata": map[string]any{"name": "pwned"}, "spec": map[string]any{"type": "account"}}},
		{"create a Store", http.MethodPost, "/apis/core.platform-mesh.io/v1alpha1/stores" + dryRun,
			map[string]any{"apiVersion": "core.platform-mesh.io/v1alpha1", "kind": "Store", "metadata": map[string]any{"name": "pwned"}, "spec": map[string]any{}}},
		{"bind bob's export spy, accepting its claims on secrets", http.MethodPost, "/apis/apis.kcp.io/v1alpha2/apibindings" + dryRun,
			map[string]any{"apiVersion": "apis.kcp.io/v1alpha2", "kind": "APIBinding", "metadata": map[string]any{"name": "spy"},
				"spec": map[string]any{"reference": map[string]any{"export": map[string]any{"path": "root:orgs:bobcorp", "name": "spy"}},
					"permissionClaims": []any{map[string]any{"group": "", "resource": "secrets", "verbs": []any{"*"}, "selector": map[string]any{"matchAll": true}, "state": "Accepted"}}}}},
		{"create a child Workspace", http.MethodPost, "/apis/tenancy.kcp.io/v1alpha1/workspaces" + dryRun,
			map[string]any{"apiVersion": "tenancy.kcp.io/v1alpha1", "kind": "Workspace", "metadata": map[string]any{"name": "pwned"},
				"spec": map[string]any{"type": map[string]any{"name": "universal", "path": "root"}}}},
	}
}

// shardURL is the base URL of a shard by name.
func (p *platform) shardURL(shard string) string {
	if shard == "b" {
		return p.shardB
	}
	return p.shardRoot
}

// otherShard is the shard a workspace does not live on.
func otherShard(shard string) string {
	if shard == "b" {
		return "root"
	}
	return "b"
}

// addressings are the ways to name a workspace: by path and by logical
// cluster, through the front proxy, its own shard and the other shard.
// The last two are ghosts: the other shard does not hold the cluster and
// refuses it.
func (p *platform) addressings(w ws) []addressing {
	return []addressing{
		{"by path through the front proxy", p.proxy + "/clusters/" + w.path, false},
		{"by cluster id through the front proxy", p.proxy + "/clusters/" + w.cluster, false},
		{"by path on its shard " + w.shard, p.shardURL(w.shard) + "/clusters/" + w.path, false},
		{"by cluster id on its shard " + w.shard, p.shardURL(w.shard) + "/clusters/" + w.cluster, false},
		{"by path on the other shard", p.shardURL(otherShard(w.shard)) + "/clusters/" + w.path, true},
		{"by cluster id on the other shard", p.shardURL(otherShard(w.shard)) + "/clusters/" + w.cluster, true},
	}
}

// addressing is one way to name a workspace: the base URL of its
// /clusters/<x>, and whether the shard asked does not hold it.
type addressing struct {
	how, base string
	ghost     bool
}

// accessProbes: outsiders of each organization (the other org's owner,
// member and ServiceAccount, a signed-in user of no org, anonymous) read
// and write in its org and account workspaces every way they can be
// named; its member writes (members only read); its ServiceAccount
// (valid in its own workspace only) acts in the account workspace, and
// acme's, which may only view, reads secrets in its own.
func (p *platform) accessProbes(tn *tenants) []probe {
	var probes []probe
	attacked := map[*org]bool{}
	for _, pair := range tn.pairs() {
		victim, other := pair[0], pair[1]
		outsiders := []attacker{
			{other.owner + " (owner of " + other.name + ")", other.ownerToken},
			{other.member + " (member of " + other.name + ")", other.memberToken},
			{other.name + "'s ServiceAccount", other.saToken},
		}
		if !attacked[victim] {
			outsiders = append(outsiders, attacker{"oidc-eve (no organization)", tn.eveToken}, attacker{"anonymous", ""})
		}
		again := attacked[victim]
		attacked[victim] = true
		for _, w := range []ws{victim.orgWS(), victim.accountWS()} {
			for _, addr := range p.addressings(w) {
				for _, a := range outsiders {
					for _, o := range readOps {
						// On the other shard too (a ghost): a shard refuses
						// a logical cluster it does not host.
						probes = append(probes, p.refused("access", a.name, a.token, o.what+" in "+w.path+" "+addr.how, call{method: o.method, url: addr.base + o.path}))
					}
					for _, o := range writeOps(a.name) {
						probes = append(probes, p.refused("access", a.name, a.token, o.what+" in "+w.path+" "+addr.how,
							call{method: o.method, url: addr.base + o.path, body: o.body}))
					}
				}
				if again {
					continue // the victim's own member and ServiceAccount: once
				}
				member := attacker{victim.member + " (member of " + victim.name + ")", victim.memberToken}
				for _, o := range writeOps(victim.member) {
					probes = append(probes, p.refused("access", member.name, member.token, o.what+" in "+w.path+" "+addr.how,
						call{method: o.method, url: addr.base + o.path, body: o.body}))
				}
				sa := attacker{victim.name + "'s ServiceAccount", victim.saToken}
				ops := append(append([]op{}, readOps...), writeOps(victim.sa)...)
				if w == victim.orgWS() {
					if victim.owner != "alice" {
						continue // bobcorp's robot is its cluster-admin at home
					}
					ops = append(readOps[:3:3], writeOps(victim.sa)...) // view: no secrets, no writes
				}
				for _, o := range ops {
					probes = append(probes, p.refused("access", sa.name, sa.token, o.what+" in "+w.path+" "+addr.how, call{method: o.method, url: addr.base + o.path, body: o.body}))
				}
			}
		}
	}
	return probes
}

// wildcardProbes: /clusters/* on the proxy and on each shard, for every
// tenant identity.
func (p *platform) wildcardProbes(tn *tenants) []probe {
	var probes []probe
	paths := []string{
		"/api/v1/secrets", "/api/v1/configmaps", "/api/v1/namespaces", "/api/v1/serviceaccounts",
		"/api/v1/secrets?watch=true&timeoutSeconds=1",
		"/apis/core.platform-mesh.io/v1alpha1/accountinfos", "/apis/core.platform-mesh.io/v1alpha1/stores",
		"/apis/core.kcp.io/v1alpha1/logicalclusters", "/apis/tenancy.kcp.io/v1alpha1/workspaces",
		"/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
	}
	for _, a := range tn.identities() {
		for _, base := range []string{p.proxy, p.shardRoot, p.shardB} {
			for _, wildcard := range []string{"*", "%2A"} {
				for _, path := range paths {
					probes = append(probes, p.refused("wildcard", a.name, a.token, "wildcard list", call{method: http.MethodGet, url: base + "/clusters/" + wildcard + path}))
				}
			}
		}
	}
	return probes
}

// identities are the tenant identities that act as attackers.
func (tn *tenants) identities() []attacker {
	return []attacker{
		{"alice (owner of acme)", tn.acme.ownerToken},
		{"bob (owner of bobcorp)", tn.bob.ownerToken},
		{"oidc-frank (owner of cobalt, on shard b)", tn.cobalt.ownerToken},
		{"oidc-carol (member of acme)", tn.acme.memberToken},
		{"oidc-dave (member of bobcorp)", tn.bob.memberToken},
		{"oidc-grace (member of cobalt)", tn.cobalt.memberToken},
		{"acme's ServiceAccount", tn.acme.saToken},
		{"bobcorp's ServiceAccount", tn.bob.saToken},
		{"cobalt's ServiceAccount", tn.cobalt.saToken},
		{"oidc-eve (no organization)", tn.eveToken},
		{"anonymous", ""},
	}
}

// orgs are the tenants' organizations.
func (tn *tenants) orgs() []*org { return []*org{tn.acme, tn.bob, tn.cobalt} }

// pairs are (victim, attacking organization): acme and bobcorp (both on
// the root shard) attack each other, bobcorp attacks cobalt (on shard b)
// and cobalt attacks acme.
func (tn *tenants) pairs() [][2]*org {
	return [][2]*org{{tn.acme, tn.bob}, {tn.bob, tn.acme}, {tn.cobalt, tn.bob}, {tn.acme, tn.cobalt}}
}

// wrongShardProbes: every tenant asks the shard that does not host its
// own workspaces for them, directly, by path and by cluster id (a shard
// refuses a logical cluster it does not host): the owner reads and
// writes, the member and the ServiceAccount read.
func (p *platform) wrongShardProbes(tn *tenants) []probe {
	var probes []probe
	for _, o := range tn.orgs() {
		for _, w := range []ws{o.orgWS(), o.accountWS()} {
			for _, addr := range p.addressings(w)[4:] {
				base := addr.base
				where := " in its own " + w.path + " " + addr.how + " (shard " + otherShard(w.shard) + ", which does not host it)"
				for _, op := range readOps {
					c := call{method: op.method, url: base + op.path}
					probes = append(probes,
						p.refused("wrong shard", o.owner+" (owner of "+o.name+")", o.ownerToken, op.what+where, c),
						p.refused("wrong shard", o.member+" (member of "+o.name+")", o.memberToken, op.what+where, c),
						p.refused("wrong shard", o.name+"'s ServiceAccount", o.saToken, op.what+where, c))
				}
				for _, op := range writeOps(o.owner) {
					probes = append(probes, p.refused("wrong shard", o.owner+" (owner of "+o.name+")", o.ownerToken, op.what+where,
						call{method: op.method, url: base + op.path, body: op.body}))
				}
			}
		}
	}
	return probes
}

// oddNameProbes: bob names alice's workspaces in odd ways.
func (p *platform) oddNameProbes(tn *tenants) []probe {
	var probes []probe
	names := []string{
		tn.bob.path + ":..:acme", tn.acme.path + ":", "ROOT:ORGS:ACME", "root::orgs:acme", tn.acme.path + "%2F", tn.bob.path + "%2F..%2F" + tn.acme.cluster,
		url.PathEscape(tn.acme.path), tn.acme.cluster + ":team", tn.bob.cluster + ":..", "root:orgs:acme:team:..", tn.acme.cluster + "%00",
		tn.bob.path + ":..:cobalt", "ROOT:ORGS:COBALT", tn.cobalt.cluster + ":cteam", "root:orgs:cobalt:cteam:..", tn.cobalt.cluster + "%00",
	}
	for _, base := range []string{p.proxy, p.shardRoot, p.shardB} {
		for _, n := range names {
			probes = append(probes, p.noVictimData("access", "bob (owner of bobcorp)", tn.bob.ownerToken, "odd workspace name "+n,
				call{method: http.MethodGet, url: base + "/clusters/" + n + "/api/v1/namespaces/" + ns + "/configmaps"}, append(tn.acme.markers(), tn.cobalt.markers()...)))
		}
	}
	return probes
}

// markers are what no outsider may see of the org: its planted value,
// as is and base64-encoded.
func (o *org) markers() []string {
	return []string{o.marker, base64.StdEncoding.EncodeToString([]byte(o.marker))}
}
