package isolation

import (
	"net/http"
	"sort"
	"strings"
)

// Issue 28's items, named in probes that belong to one.
const (
	itemStoreRef    = "1. AuthorizationModel into another org's Store"
	itemStoreID     = "2. Store.status.storeId is trusted"
	itemMasters     = "3. impersonating system:masters / Workspace spec.cluster"
	itemPath        = "4. rewriting the LogicalCluster's kcp.io/path"
	itemMounts      = "5. mounts reach internal URLs (SSRF)"
	itemWarrant     = "also found: impersonated warrants and reserved extras"
	itemAccountInfo = "also found: AccountInfo editable by a workspace admin"
	itemSystemOnly  = "also found: system-only metadata and fields"
)

// impersonationProbes: bob is cluster-admin of bobcorp, so RBAC lets him
// impersonate there; privileged groups, kcp's system users and reserved
// extras must still be refused, and no impersonation reaches into acme.
func (p *platform) impersonationProbes(tn *tenants) []probe {
	ssr := map[string]any{"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}
	headers := []struct {
		what, issue string
		h           map[string]string
	}{
		{"group system:masters", itemMasters, map[string]string{"Impersonate-User": "bob", "Impersonate-Group": "system:masters"}},
		{"group system:kcp:admin", itemMasters, map[string]string{"Impersonate-User": "bob", "Impersonate-Group": "system:kcp:admin"}},
		{"group system:kcp:logical-cluster-admin", itemMasters, map[string]string{"Impersonate-User": "bob", "Impersonate-Group": "system:kcp:logical-cluster-admin"}},
		{"user system:kcp:admin", "", map[string]string{"Impersonate-User": "system:kcp:admin"}},
		{"user system:admin", "", map[string]string{"Impersonate-User": "system:admin"}},
		{"user kcp-admin", "", map[string]string{"Impersonate-User": "kcp-admin"}},
		{"extra authorization.kcp.io/warrant of alice", itemWarrant, map[string]string{"Impersonate-User": "bob",
			"Impersonate-Extra-authorization.kcp.io%2fwarrant": `{"user":"alice","groups":["system:authenticated"]}`}},
		{"extra authorization.kcp.io/warrant of system:masters", itemWarrant, map[string]string{"Impersonate-User": "bob",
			"Impersonate-Extra-authorization.kcp.io%2fwarrant": `{"user":"bob","groups":["system:masters"]}`}},
		{"extra authentication.kcp.io/scopes of acme", itemWarrant, map[string]string{"Impersonate-User": "bob",
			"Impersonate-Extra-authentication.kcp.io%2fscopes": "cluster:" + tn.acme.cluster}},
		{"extra authentication.kcp.io/cluster-name of acme", itemWarrant, map[string]string{"Impersonate-User": "bob",
			"Impersonate-Extra-authentication.kcp.io%2fcluster-name": tn.acme.cluster}},
	}
	var probes []probe
	bob := "bob (owner of bobcorp)"
	for _, h := range headers {
		// In his own workspace, where RBAC lets him impersonate.
		for _, base := range []string{p.proxy + "/clusters/" + tn.bob.path, p.shardURL(tn.bob.shard) + "/clusters/" + tn.bob.cluster} {
			pr := p.refused("impersonation", bob, tn.bob.ownerToken, "impersonate "+h.what+" in bobcorp",
				call{method: http.MethodPost, url: base + "/apis/authentication.k8s.io/v1/selfsubjectreviews", header: h.h, body: ssr})
			pr.issue = h.issue
			probes = append(probes, pr)
		}
		// Into acme's and cobalt's workspaces: refused whatever the header says.
		for _, w := range []ws{tn.acme.orgWS(), tn.acme.accountWS(), tn.cobalt.orgWS(), tn.cobalt.accountWS()} {
			for _, addr := range p.addressings(w)[:4] {
				for _, o := range []op{readOps[1], writeOps("bob")[3]} {
					probes = append(probes, p.refused("impersonation", bob, tn.bob.ownerToken, "impersonate "+h.what+": "+o.what+" in "+w.path+" "+addr.how,
						call{method: o.method, url: addr.base + o.path, header: h.h, body: o.body}))
				}
			}
		}
	}
	// As alice, and as acme's own ServiceAccount, and with the core's
	// internal deep-review header.
	asAlice := []map[string]string{
		{"Impersonate-User": "alice"},
		{"Impersonate-User": "alice", "Impersonate-Group": "system:authenticated"},
		{"Impersonate-User": "system:serviceaccount:" + ns + ":robot", "Impersonate-Extra-authentication.kubernetes.io%2fcluster-name": tn.acme.cluster},
		{"X-Kcp-Internal-Deep-SubjectAccessReview": "true"},
	}
	for _, a := range []attacker{{bob, tn.bob.ownerToken}, {"oidc-eve (no organization)", tn.eveToken}, {"bobcorp's ServiceAccount", tn.bob.saToken}} {
		for _, h := range asAlice {
			for _, addr := range p.addressings(tn.acme.orgWS())[:4] {
				probes = append(probes, p.refused("impersonation", a.name, a.token, "impersonate "+describe(h)+": list secrets in acme "+addr.how,
					call{method: http.MethodGet, url: addr.base + readOps[1].path, header: h}))
			}
		}
	}
	// With system:masters, the destructive requests of the issue (dry-run).
	masters := map[string]string{"Impersonate-User": "bob", "Impersonate-Group": "system:masters"}
	for _, o := range []op{
		{"create a Workspace adopting acme's logical cluster", http.MethodPost, "/apis/tenancy.kcp.io/v1alpha1/workspaces" + dryRun,
			map[string]any{"apiVersion": "tenancy.kcp.io/v1alpha1", "kind": "Workspace", "metadata": map[string]any{"name": "grab"},
				"spec": map[string]any{"cluster": tn.acme.cluster, "type": map[string]any{"name": "universal", "path": "root"}}}},
		{"delete his own LogicalCluster", http.MethodDelete, "/apis/core.kcp.io/v1alpha1/logicalclusters/cluster" + dryRun, nil},
	} {
		pr := p.refused("impersonation", bob, tn.bob.ownerToken, "impersonate group system:masters: "+o.what,
			call{method: o.method, url: p.proxy + "/clusters/" + tn.bob.path + o.path, header: masters, body: o.body})
		pr.issue = itemMasters
		probes = append(probes, pr)
	}
	return probes
}

// describe lists headers in a stable order.
func describe(h map[string]string) string {
	keys := make([]string, 0, len(h))
	for k := range h {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + ": " + h[k]
	}
	return strings.Join(parts, ", ")
}
