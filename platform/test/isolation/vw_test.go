package isolation

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
)

// virtualWorkspaceProbes: every virtual workspace of the platform
// (the core.platform-mesh.io export's, the initializing and terminating
// ones of root:security and of the account-operator's type) on each shard
// and through the proxy, as every tenant identity; and bob's own export
// and workspace type, whose views must show nothing of acme.
func (p *platform) virtualWorkspaceProbes(t *testing.T, ctx context.Context, tn *tenants) []probe {
	export := "/services/apiexport/" + tn.pmsCluster + "/core.platform-mesh.io"
	exportByPath := "/services/apiexport/root:platform-mesh-system/core.platform-mesh.io"
	vws := []string{
		export, exportByPath,
		"/services/initializingworkspaces/root:security", "/services/terminatingworkspaces/root:security",
		"/services/initializingworkspaces/" + tn.pmsCluster + ":account-operator",
		"/services/initializingworkspaces/root:platform-mesh-system:account-operator",
	}
	inside := []string{
		"/clusters/*/apis/core.platform-mesh.io/v1alpha1/accountinfos",
		"/clusters/*/apis/core.platform-mesh.io/v1alpha1/stores",
		"/clusters/*/apis/core.kcp.io/v1alpha1/logicalclusters",
		"/clusters/*/api/v1/namespaces",
		"/clusters/" + tn.acme.cluster + "/apis/core.platform-mesh.io/v1alpha1/accountinfos/account",
		"/clusters/" + tn.acme.cluster + "/api/v1/namespaces/" + ns + "/secrets",
		"/clusters/" + tn.acme.cluster + "/apis/core.kcp.io/v1alpha1/logicalclusters/cluster",
		"/clusters/" + tn.orgsCluster + "/apis/core.platform-mesh.io/v1alpha1/stores/acme",
		"/clusters/" + tn.cobalt.cluster + "/apis/core.platform-mesh.io/v1alpha1/accountinfos/account",
		"/clusters/" + tn.cobalt.accountCluster + "/api/v1/namespaces/" + ns + "/secrets",
		"/clusters/" + tn.cobalt.cluster + "/apis/core.kcp.io/v1alpha1/logicalclusters/cluster",
		"/clusters/" + tn.orgsCluster + "/apis/core.platform-mesh.io/v1alpha1/stores/cobalt",
	}
	var probes []probe
	for _, a := range tn.identities() {
		for _, base := range []string{p.proxy, p.shardRoot, p.shardB} {
			for _, vw := range vws {
				for _, in := range inside {
					probes = append(probes, p.refused("virtual workspace", a.name, a.token, "read through the platform's virtual workspace",
						call{method: http.MethodGet, url: base + vw + in}))
				}
				for _, victim := range []*org{tn.acme, tn.cobalt} {
					probes = append(probes, p.refused("virtual workspace", a.name, a.token, "write "+victim.name+"'s AccountInfo through the platform's virtual workspace",
						call{method: http.MethodPatch, url: base + vw + "/clusters/" + victim.cluster + "/apis/core.platform-mesh.io/v1alpha1/accountinfos/account" + dryRun,
							body: map[string]any{"spec": map[string]any{"fga": map[string]any{"store": map[string]any{"id": tn.bob.storeID}}}}}))
					probes = append(probes, p.refused("virtual workspace", a.name, a.token, "release "+victim.name+"'s LogicalCluster through the platform's virtual workspace",
						call{method: http.MethodPatch, url: base + vw + "/clusters/" + victim.cluster + "/apis/core.kcp.io/v1alpha1/logicalclusters/cluster/status" + dryRun,
							body: map[string]any{"status": map[string]any{"initializers": []any{}}}}))
				}
			}
		}
	}

	// bob's own export (claiming secrets, configmaps and namespaces of
	// whoever binds it: nobody did) and workspace type (initializer and
	// terminator: no workspace of acme has it).
	bob := p.bobsViews(t, ctx, tn)
	for _, base := range []string{p.proxy, p.shardRoot, p.shardB} {
		for _, vw := range bob {
			for _, in := range append(inside, "/clusters/*/api/v1/secrets", "/clusters/*/api/v1/configmaps") {
				probes = append(probes, p.noVictimData("virtual workspace", "bob (owner of bobcorp)", tn.bob.ownerToken, "read through his own virtual workspace",
					call{method: http.MethodGet, url: base + vw + in}, append(append(tn.acme.markers(), tn.acme.cluster, tn.acme.accountCluster, tn.acme.storeID),
						append(tn.cobalt.markers(), tn.cobalt.cluster, tn.cobalt.accountCluster, tn.cobalt.storeID)...)))
			}
			for _, c := range []string{tn.acme.cluster, tn.acme.accountCluster, tn.cobalt.cluster, tn.cobalt.accountCluster} {
				probes = append(probes, p.refused("virtual workspace", "bob (owner of bobcorp)", tn.bob.ownerToken, "write into acme through his own virtual workspace",
					call{method: http.MethodPost, url: base + vw + "/clusters/" + c + "/api/v1/namespaces/" + ns + "/configmaps" + dryRun,
						body: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "pwned"}}}))
			}
		}
	}
	// "My organizations" (/services/myorgs/clusters/root:orgs): each
	// organization's owner and member list, get and watch there and see
	// nothing of the organization they attack; writes are refused.
	const myOrgs = "/services/myorgs/clusters/root:orgs/apis/core.platform-mesh.io/v1alpha1/accounts"
	for _, o := range tn.orgs() {
		p.control(t, ctx, o.owner+" lists his organization through My organizations",
			call{method: http.MethodGet, url: p.proxy + myOrgs, token: o.ownerToken}, `"name":"`+o.name+`"`)
	}
	for _, pair := range tn.pairs() {
		victim, by := pair[0], pair[1]
		leak := []string{`"name":"` + victim.name + `"`, victim.cluster, victim.storeID}
		for _, who := range []attacker{{by.owner + " (owner of " + by.name + ")", by.ownerToken},
			{by.member + " (member of " + by.name + ")", by.memberToken}} {
			for _, base := range []string{p.proxy, p.shardRoot} {
				for _, q := range []string{"", "?watch=1&timeoutSeconds=1", "/" + victim.name} {
					probes = append(probes, p.noVictimData("virtual workspace", who.name, who.token, "read "+victim.name+" through My organizations",
						call{method: http.MethodGet, url: base + myOrgs + q}, leak))
				}
				probes = append(probes, p.refused("virtual workspace", who.name, who.token, "delete "+victim.name+" through My organizations",
					call{method: http.MethodDelete, url: base + myOrgs + "/" + victim.name + dryRun}))
			}
		}
	}
	return probes
}

// bobsViews: bob makes an APIExport claiming secrets, configmaps and
// namespaces, and a WorkspaceType with an initializer and a terminator,
// in his org; it returns their virtual workspaces.
func (p *platform) bobsViews(t *testing.T, ctx context.Context, tn *tenants) []string {
	t.Helper()
	base := p.proxy + "/clusters/" + tn.bob.path
	claims := []any{
		map[string]any{"group": "", "resource": "secrets", "verbs": []any{"*"}},
		map[string]any{"group": "", "resource": "configmaps", "verbs": []any{"*"}},
		map[string]any{"group": "", "resource": "namespaces", "verbs": []any{"*"}},
	}
	p.must(t, ctx, "bob's APIExport", call{method: http.MethodPost, url: base + "/apis/apis.kcp.io/v1alpha2/apiexports", token: tn.bob.ownerToken,
		body: map[string]any{"apiVersion": "apis.kcp.io/v1alpha2", "kind": "APIExport", "metadata": map[string]any{"name": "spy"},
			"spec": map[string]any{"permissionClaims": claims}}})
	p.must(t, ctx, "bob's WorkspaceType", call{method: http.MethodPost, url: base + "/apis/tenancy.kcp.io/v1alpha1/workspacetypes", token: tn.bob.ownerToken,
		body: map[string]any{"apiVersion": "tenancy.kcp.io/v1alpha1", "kind": "WorkspaceType", "metadata": map[string]any{"name": "trap"},
			"spec": map[string]any{"initializer": true, "terminator": true}}})
	var views []string
	eventually(t, 30*time.Second, "bob's WorkspaceType's virtual workspaces", func() (bool, string) {
		a := p.do(ctx, call{method: http.MethodGet, url: base + "/apis/tenancy.kcp.io/v1alpha1/workspacetypes/trap", token: tn.bob.ownerToken})
		var wt struct {
			Status struct{ VirtualWorkspaces []struct{ URL string } }
		}
		_ = a.decode(&wt)
		views = views[:0]
		for _, v := range wt.Status.VirtualWorkspaces {
			if i := strings.Index(v.URL, "/services/"); i >= 0 {
				views = append(views, v.URL[i:])
			}
		}
		return len(views) > 0, a.String()
	})
	return append(dedupe(views), "/services/apiexport/"+tn.bob.cluster+"/spy", "/services/apiexport/"+tn.bob.path+"/spy")
}

func dedupe(s []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, v := range s {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}

// graphQLProbes: the gateway passes the caller's token on; nobody reads
// or writes another organization through it, by path or cluster id.
func (p *platform) graphQLProbes(tn *tenants) []probe {
	queries := []struct{ what, query string }{
		{"list secrets", `{ v1 { Secrets(namespace: "apps") { items { metadata { name } data } } } }`},
		{"read the planted configmap", `{ v1 { ConfigMap(namespace: "apps", name: "settings") { data } } }`},
		{"read the AccountInfo", `{ core_platform_mesh_io { v1alpha1 { AccountInfo(name: "account") { spec { fga { store { id } } } } } } }`},
		{"create a configmap", `mutation { v1 { createConfigMap(namespace: "apps", object: {metadata: {name: "pwned"}, data: {a: "b"}}, dryRun: true) { metadata { name } } } }`},
		{"delete the planted secret", `mutation { v1 { deleteSecret(namespace: "apps", name: "dbcreds", dryRun: true) } }`},
		{"introspect", `{ __schema { queryType { name } } }`},
	}
	var probes []probe
	attacked := map[*org]bool{}
	for _, pair := range tn.pairs() {
		victim, other := pair[0], pair[1]
		attackers := []attacker{
			{other.owner + " (owner of " + other.name + ")", other.ownerToken},
			{other.member + " (member of " + other.name + ")", other.memberToken},
			{other.name + "'s ServiceAccount", other.saToken},
		}
		if !attacked[victim] {
			attackers = append(attackers, attacker{"oidc-eve (no organization)", tn.eveToken}, attacker{"anonymous", ""})
		}
		again := attacked[victim]
		attacked[victim] = true
		onB := map[string]bool{}
		for _, w := range []ws{victim.orgWS(), victim.accountWS()} {
			onB[w.path], onB[w.cluster] = w.shard != "root", w.shard != "root"
		}
		for _, w := range []string{victim.path, victim.cluster, victim.account, victim.accountCluster} {
			for _, a := range attackers {
				for _, q := range queries {
					// The gateway serves the root shard: a workspace on b
					// is a ghost there (see addressings), only its data
					// must not come back.
					probes = append(probes, p.graphQLProbe(a, "GraphQL: "+q.what+" in "+w, w, q.query, victim.markers(), !onB[w]))
				}
			}
			// The member reads, but writes nothing.
			if again {
				continue
			}
			for _, q := range queries[3:5] {
				probes = append(probes, p.graphQLProbe(attacker{victim.member + " (member of " + victim.name + ")", victim.memberToken},
					"GraphQL: "+q.what+" in "+w, w, q.query, nil, true))
			}
		}
	}
	return probes
}

// graphQLProbe: a leak is an answer holding a marker, or (strict) any
// answer without errors.
func (p *platform) graphQLProbe(a attacker, what, workspace, query string, markers []string, strict bool) probe {
	c := call{method: http.MethodPost, url: p.graphql + "/api/clusters/" + workspace + "/graphql", token: a.token, body: map[string]any{"query": query}}
	return probe{area: "graphql", who: a.name, what: what + " (POST " + c.url + ")", run: func(ctx context.Context) verdict {
		ans := p.do(ctx, c)
		v := verdict{detail: ans.String(), serverError: ans.err == nil && ans.code >= 500}
		var body struct {
			Errors []json.RawMessage
			Data   json.RawMessage
		}
		if strict && ans.ok() && ans.decode(&body) == nil && len(body.Errors) == 0 {
			v.leak = true
		}
		for _, m := range markers {
			if strings.Contains(string(ans.body), m) {
				v.leak = true
			}
		}
		return v
	}}
}
