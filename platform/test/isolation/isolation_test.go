package isolation

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestTenantIsolation starts the platform, sets up the tenants, checks
// that each kind of request works for those it is meant for (the
// controls: a probe refused for everyone proves nothing), then plays
// attacker: first every probe that leaves the victims as they are, all at
// once, then the takeovers, which write for real against spare workspaces
// or with user names of their own.
func TestTenantIsolation(t *testing.T) {
	started := time.Now()
	ctx := context.Background()
	p := startPlatform(t)
	tn := setupTenants(t, ctx, p)
	p.must(t, ctx, "alice's APIExport widgets", call{method: http.MethodPost, url: p.proxy + "/clusters/" + tn.acme.path + "/apis/apis.kcp.io/v1alpha2/apiexports",
		token: tn.acme.ownerToken, body: map[string]any{"apiVersion": "apis.kcp.io/v1alpha2", "kind": "APIExport", "metadata": map[string]any{"name": "widgets"}, "spec": map[string]any{}}})
	t.Logf("platform and tenants ready in %s", time.Since(started).Round(time.Second))
	p.controls(t, ctx, tn)

	probes := p.accessProbes(tn)
	probes = append(probes, p.wildcardProbes(tn)...)
	probes = append(probes, p.wrongShardProbes(tn)...)
	probes = append(probes, p.oddNameProbes(tn)...)
	probes = append(probes, p.sharedProbes(tn)...)
	probes = append(probes, p.impersonationProbes(tn)...)
	probes = append(probes, p.virtualWorkspaceProbes(t, ctx, tn)...)
	probes = append(probes, p.graphQLProbes(tn)...)
	probes = append(probes, p.crdProbes(tn)...)
	probes = append(probes, p.tenantIssuerProbes(t, ctx, tn)...)
	phase1 := time.Now()
	results := runProbes(ctx, probes, 16)
	t.Logf("%d probes in %s", len(probes), time.Since(phase1).Round(time.Second))

	takeovers := append(p.takeoverProbes(tn), p.mountProbes(t, ctx, tn)...)
	takeovers = append(takeovers, p.systemMetadataProbes(tn)...)
	phase2 := time.Now()
	results = append(results, runProbes(ctx, takeovers, len(takeovers))...)
	results = append(results, runProbes(ctx, []probe{p.accountInfoProbe(tn), p.orgInfoProbe(tn)}, 2)...)
	results = append(results, runProbes(ctx, []probe{p.storeIDProbe(tn)}, 1)...)
	t.Logf("%d takeover probes in %s; %s in all", len(takeovers), time.Since(phase2).Round(time.Second), time.Since(started).Round(time.Second))
	report(t, results)
}

// controls: the requests the probes make succeed for the identities they
// are meant for, through every way of naming a workspace the probes use.
func (p *platform) controls(t *testing.T, ctx context.Context, tn *tenants) {
	t.Helper()
	for _, o := range tn.orgs() {
		for _, w := range []ws{o.orgWS(), o.accountWS()} {
			for _, addr := range p.addressings(w)[:4] {
				for _, op := range readOps {
					p.control(t, ctx, o.owner+": "+op.what+" in "+w.path+" "+addr.how, call{method: op.method, url: addr.base + op.path, token: o.ownerToken}, "")
				}
				p.control(t, ctx, o.owner+": read the secret "+addr.how, call{method: http.MethodGet, url: addr.base + readOps[0].path, token: o.ownerToken}, o.markers()[1])
				for _, op := range writeOps(o.owner)[:4] {
					p.control(t, ctx, o.owner+": "+op.what+" in "+w.path+" "+addr.how, call{method: op.method, url: addr.base + op.path, token: o.ownerToken, body: op.body}, "")
				}
				if !o.memberGranted {
					continue
				}
				p.control(t, ctx, o.member+": read the configmap in "+w.path+" "+addr.how, call{method: http.MethodGet, url: addr.base + readOps[4].path, token: o.memberToken}, o.marker)
			}
		}
		p.control(t, ctx, o.name+"'s ServiceAccount: list configmaps at home", call{method: http.MethodGet, url: p.proxy + "/clusters/" + o.path + "/api/v1/namespaces/" + ns + "/configmaps", token: o.saToken}, o.marker)
		for _, q := range []string{
			`{ v1 { Secrets(namespace: "apps") { items { metadata { name } data } } } }`,
			`{ core_platform_mesh_io { v1alpha1 { AccountInfo(name: "account") { spec { fga { store { id } } } } } } }`,
			`mutation { v1 { createConfigMap(namespace: "apps", object: {metadata: {name: "pwned"}, data: {a: "b"}}, dryRun: true) { metadata { name } } } }`,
		} {
			if o.shard != "root" {
				continue // the gateway serves the root shard's workspaces
			}
			a := p.do(ctx, call{method: http.MethodPost, url: p.graphql + "/api/clusters/" + o.path + "/graphql", token: o.ownerToken, body: map[string]any{"query": q}})
			if !a.ok() || strings.Contains(string(a.body), `"errors"`) {
				t.Errorf("control: %s's GraphQL %s in %s: %s", o.owner, q, o.path, a)
			}
		}
	}
	// The platform's virtual workspaces answer the admin on every shard
	// and through the proxy.
	for _, base := range []string{p.proxy, p.shardRoot, p.shardB} {
		for _, u := range []string{
			"/services/apiexport/" + tn.pmsCluster + "/core.platform-mesh.io/clusters/*/apis/core.platform-mesh.io/v1alpha1/accountinfos",
			"/services/initializingworkspaces/root:security/clusters/*/apis/core.kcp.io/v1alpha1/logicalclusters",
			"/services/terminatingworkspaces/root:security/clusters/*/apis/core.kcp.io/v1alpha1/logicalclusters",
			"/services/initializingworkspaces/" + tn.pmsCluster + ":account-operator/clusters/*/apis/core.kcp.io/v1alpha1/logicalclusters",
		} {
			p.control(t, ctx, "the admin through a virtual workspace", call{method: http.MethodGet, url: base + u, token: p.tokens["kcp-admin"]}, "")
		}
	}
	if t.Failed() {
		t.FailNow()
	}
}

func (p *platform) control(t *testing.T, ctx context.Context, what string, c call, want string) {
	t.Helper()
	a := p.do(ctx, c)
	if !a.ok() || !strings.Contains(string(a.body), want) {
		t.Errorf("control: %s (%s %s): %s", what, c.method, c.url, a)
	}
}
