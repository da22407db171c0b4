package isolation

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
)

// crdProbes: bob writes, in his own organization, every platform object
// and field a tenant can write, aimed at acme; none may be stored as
// written where it is system-only, and none may reach acme.
func (p *platform) crdProbes(tn *tenants) []probe {
	bob, token := "bob (owner of bobcorp)", tn.bob.ownerToken
	base := p.proxy + "/clusters/" + tn.bob.path
	var probes []probe
	add := func(pr probe, issue string) {
		pr.area, pr.issue = "platform CRDs", issue
		probes = append(probes, pr)
	}
	// In his org workspace (root shard) and his account's (shard b).
	for _, w := range []ws{tn.bob.orgWS(), tn.bob.accountWS()} {
		info := p.proxy + "/clusters/" + w.path + "/apis/core.platform-mesh.io/v1alpha1/accountinfos/account" + dryRun
		in := " in " + w.path + " (shard " + w.shard + ")"
		add(p.refused("", bob, token, "point his AccountInfo at acme's OpenFGA store"+in, call{method: http.MethodPatch, url: info,
			body: map[string]any{"spec": map[string]any{"fga": map[string]any{"store": map[string]any{"id": tn.acme.storeID}}}}}), itemAccountInfo)
		add(p.refused("", bob, token, "make his AccountInfo say it is acme's account"+in, call{method: http.MethodPatch, url: info,
			body: map[string]any{"spec": map[string]any{"account": map[string]any{"name": "acme", "originClusterId": tn.orgsCluster}}}}), itemAccountInfo)
		add(p.refused("", bob, token, "make his AccountInfo say it belongs to organization acme"+in, call{method: http.MethodPatch, url: info,
			body: map[string]any{"spec": map[string]any{"organization": map[string]any{"name": "acme", "originClusterId": tn.orgsCluster, "generatedClusterId": tn.acme.cluster}}}}), itemAccountInfo)
	}

	// An Account whose creator names alice is stored with bob as creator
	// (the export's admission policy), on either shard.
	for _, w := range []ws{tn.bob.orgWS(), tn.bob.accountWS()} {
		add(p.notStored(bob, token, "create an Account with spec.creator alice in "+w.path+" (shard "+w.shard+")", call{method: http.MethodPost,
			url: p.proxy + "/clusters/" + w.path + "/apis/core.platform-mesh.io/v1alpha1/accounts" + dryRun,
			body: map[string]any{"apiVersion": "core.platform-mesh.io/v1alpha1", "kind": "Account", "metadata": map[string]any{"name": "impostor"},
				"spec": map[string]any{"type": "account", "creator": "alice"}}}, "", []string{"spec", "creator"}, "alice"), "")
	}

	// Workspaces of another organization's types, or of the platform's
	// own types, are not his to use.
	for _, typ := range []map[string]any{
		{"name": "acme-org", "path": "root:orgs"}, {"name": "acme-account", "path": "root:orgs"},
		{"name": "org", "path": "root"}, {"name": "account", "path": "root"}, {"name": "security", "path": "root"}, {"name": "orgs", "path": "root"},
		{"name": "account-operator", "path": "root:platform-mesh-system"},
	} {
		add(p.refused("", bob, token, "create a Workspace of type "+typ["path"].(string)+":"+typ["name"].(string), call{method: http.MethodPost,
			url:  base + "/apis/tenancy.kcp.io/v1alpha1/workspaces" + dryRun,
			body: map[string]any{"apiVersion": "tenancy.kcp.io/v1alpha1", "kind": "Workspace", "metadata": map[string]any{"name": "typed"}, "spec": map[string]any{"type": typ}}}), "")
	}

	// Binding acme's export, by path and by cluster id.
	for _, ref := range []string{tn.acme.path, tn.acme.cluster} {
		add(p.refused("", bob, token, "bind acme's APIExport widgets at "+ref, call{method: http.MethodPost,
			url: base + "/apis/apis.kcp.io/v1alpha2/apibindings" + dryRun,
			body: map[string]any{"apiVersion": "apis.kcp.io/v1alpha2", "kind": "APIBinding", "metadata": map[string]any{"name": "steal"},
				"spec": map[string]any{"reference": map[string]any{"export": map[string]any{"path": ref, "name": "widgets"}}}}}), "")
	}

	return probes
}

// notStored: the write may succeed, but the field at path must not hold
// the value the tenant wrote, in the answer or, with readBack, in the
// object read back afterwards (a dry-run answer does not show what
// storage stamps).
func (p *platform) notStored(who, token, what string, c call, readBack string, path []string, value string) probe {
	c.token = token
	return probe{who: who, what: what + " (" + c.method + " " + c.url + ")", run: func(ctx context.Context) verdict {
		a := p.do(ctx, c)
		v := refusedVerdict(a)
		if !a.ok() {
			return v
		}
		if readBack != "" {
			a = p.do(ctx, call{method: http.MethodGet, url: readBack, token: token})
		}
		var obj any
		if err := json.Unmarshal(a.body, &obj); err != nil {
			return verdict{leak: true, detail: "unreadable answer: " + a.String()}
		}
		got := lookup(obj, path)
		v.leak = got == value
		v.detail = strings.Join(path, ".") + " stored as " + got
		return v
	}}
}

// systemMetadataProbes: bob writes system-only metadata for real (and
// reads it back) on his account bteam's LogicalCluster and objects; run
// after the probes that use bteam as a victim.
func (p *platform) systemMetadataProbes(tn *tenants) []probe {
	bob, token := "bob (owner of bobcorp)", tn.bob.ownerToken
	lc := p.proxy + "/clusters/" + tn.bob.accountCluster + "/apis/core.kcp.io/v1alpha1/logicalclusters/cluster"
	var probes []probe
	for _, ann := range [][2]string{
		{"internal.tenancy.kcp.io/type", "root:orgs:acme-org"},
		{"core.kcp.io/shard", otherShard(tn.bob.accountShard)},
		{"kcp.io/cluster", tn.acme.cluster},
	} {
		pr := p.notStored(bob, token, "annotate his account's LogicalCluster "+ann[0]+"="+ann[1], call{method: http.MethodPatch, url: lc,
			body: map[string]any{"metadata": map[string]any{"annotations": map[string]any{ann[0]: ann[1]}}}}, lc, []string{"metadata", "annotations", ann[0]}, ann[1])
		pr.area, pr.issue = "platform CRDs", itemSystemOnly
		probes = append(probes, pr)
	}
	cm := p.proxy + "/clusters/" + tn.bob.accountCluster + "/api/v1/namespaces/default/configmaps"
	pr := p.notStored(bob, token, "create a configmap annotated kcp.io/cluster of acme", call{method: http.MethodPost, url: cm,
		body: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "forged",
			"annotations": map[string]any{"kcp.io/cluster": tn.acme.cluster}}}}, cm+"/forged", []string{"metadata", "annotations", "kcp.io/cluster"}, tn.acme.cluster)
	pr.area, pr.issue = "platform CRDs", itemSystemOnly
	return append(probes, pr)
}

// lookup returns the string at path in a decoded JSON object.
func lookup(obj any, path []string) string {
	for _, k := range path {
		m, ok := obj.(map[string]any)
		if !ok {
			return ""
		}
		obj = m[k]
	}
	s, _ := obj.(string)
	return s
}
