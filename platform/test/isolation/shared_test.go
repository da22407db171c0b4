package isolation

import (
	"net/http"
)

// sharedProbes: tenants in the workspaces every organization depends on:
// root, root:orgs (where every org's Account, Workspace and Store live)
// and root:platform-mesh-system (the platform's export and the operators'
// ServiceAccounts).
func (p *platform) sharedProbes(tn *tenants) []probe {
	store := "/apis/core.platform-mesh.io/v1alpha1/stores/"
	account := "/apis/core.platform-mesh.io/v1alpha1/accounts/"
	workspace := "/apis/tenancy.kcp.io/v1alpha1/workspaces/"
	wstype := "/apis/tenancy.kcp.io/v1alpha1/workspacetypes/"
	crb := map[string]any{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": map[string]any{"name": "pwned"},
		"roleRef":  map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-admin"},
		"subjects": []any{map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "system:authenticated"}}}
	token := map[string]any{"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": map[string]any{}}
	targets := []struct {
		w    ws
		ops  []op
		skip string // the owner whose own organization the ops are on
	}{
		{ws{"root:orgs", tn.orgsCluster, "root"}, []op{
			{"read acme's Store (its store id and tuples)", http.MethodGet, store + "acme", nil},
			{"list the Stores", http.MethodGet, "/apis/core.platform-mesh.io/v1alpha1/stores", nil},
			{"add a tuple to acme's Store", http.MethodPatch, store + "acme" + dryRun,
				map[string]any{"spec": map[string]any{"tuples": []any{map[string]any{"object": tn.acme.fgaObject(), "relation": "owner", "user": "user:bob"}}}}},
			{"point acme's Store at another store id", http.MethodPatch, store + "acme/status" + dryRun,
				map[string]any{"status": map[string]any{"storeId": tn.bob.storeID}}},
			{"delete acme's Store", http.MethodDelete, store + "acme" + dryRun, nil},
			{"create a Store named like a new org", http.MethodPost, "/apis/core.platform-mesh.io/v1alpha1/stores" + dryRun,
				map[string]any{"apiVersion": "core.platform-mesh.io/v1alpha1", "kind": "Store", "metadata": map[string]any{"name": "zzorg"}, "spec": map[string]any{}}},
			{"delete acme's org Account", http.MethodDelete, account + "acme" + dryRun, nil},
			{"take over acme's org Account (spec.creator)", http.MethodPatch, account + "acme" + dryRun, map[string]any{"spec": map[string]any{"creator": "bob"}}},
			{"delete acme's Workspace", http.MethodDelete, workspace + "acme" + dryRun, nil},
			{"repoint acme's Workspace", http.MethodPatch, workspace + "acme" + dryRun, map[string]any{"spec": map[string]any{"cluster": tn.bob.cluster}}},
			{"rename acme's Workspace owner", http.MethodPatch, workspace + "acme" + dryRun,
				map[string]any{"metadata": map[string]any{"annotations": map[string]any{"experimental.tenancy.kcp.io/owner": `{"username":"bob"}`}}}},
			{"change acme's workspace type", http.MethodPatch, wstype + "acme-org" + dryRun, map[string]any{"spec": map[string]any{"authenticationConfigurations": []any{map[string]any{"name": "x"}}}}},
			{"delete acme's workspace type", http.MethodDelete, wstype + "acme-account" + dryRun, nil},
			{"bind every user to cluster-admin", http.MethodPost, "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings" + dryRun, crb},
			{"widen the orgs member role", http.MethodPatch, "/apis/rbac.authorization.k8s.io/v1/clusterroles/meshplane:orgs:member" + dryRun,
				map[string]any{"rules": []any{map[string]any{"apiGroups": []any{"*"}, "resources": []any{"*"}, "verbs": []any{"*"}}}}},
			{"read the secrets", http.MethodGet, "/api/v1/secrets", nil},
			{"rewrite the LogicalCluster", http.MethodPatch, "/apis/core.kcp.io/v1alpha1/logicalclusters/cluster" + dryRun,
				map[string]any{"metadata": map[string]any{"annotations": map[string]any{"kcp.io/path": "root:pwned"}}}},
		}, tn.acme.ownerToken},
		{ws{"root:orgs", tn.orgsCluster, "root"}, []op{
			{"read cobalt's Store", http.MethodGet, store + "cobalt", nil},
			{"add a tuple to cobalt's Store", http.MethodPatch, store + "cobalt" + dryRun,
				map[string]any{"spec": map[string]any{"tuples": []any{map[string]any{"object": tn.cobalt.fgaObject(), "relation": "owner", "user": "user:bob"}}}}},
			{"point cobalt's Store at another store id", http.MethodPatch, store + "cobalt/status" + dryRun,
				map[string]any{"status": map[string]any{"storeId": tn.bob.storeID}}},
			{"delete cobalt's org Account", http.MethodDelete, account + "cobalt" + dryRun, nil},
			{"take over cobalt's org Account (spec.creator)", http.MethodPatch, account + "cobalt" + dryRun, map[string]any{"spec": map[string]any{"creator": "bob"}}},
			{"delete cobalt's Workspace", http.MethodDelete, workspace + "cobalt" + dryRun, nil},
			{"repoint cobalt's Workspace", http.MethodPatch, workspace + "cobalt" + dryRun, map[string]any{"spec": map[string]any{"cluster": tn.bob.cluster}}},
			{"move cobalt's Workspace to the root shard", http.MethodPatch, workspace + "cobalt" + dryRun,
				map[string]any{"metadata": map[string]any{"annotations": map[string]any{"core.kcp.io/shard": "root"}}}},
			{"change cobalt's workspace type", http.MethodPatch, wstype + "cobalt-org" + dryRun, map[string]any{"spec": map[string]any{"authenticationConfigurations": []any{map[string]any{"name": "x"}}}}},
			{"delete cobalt's workspace type", http.MethodDelete, wstype + "cobalt-account" + dryRun, nil},
		}, tn.cobalt.ownerToken},
		{ws{"root:platform-mesh-system", tn.pmsCluster, "root"}, []op{
			{"mint a token for the account-operator", http.MethodPost, "/api/v1/namespaces/default/serviceaccounts/account-operator/token" + dryRun, token},
			{"mint a token for the security-operator", http.MethodPost, "/api/v1/namespaces/default/serviceaccounts/security-operator/token" + dryRun, token},
			{"read the secrets", http.MethodGet, "/api/v1/namespaces/default/secrets", nil},
			{"change the platform's export", http.MethodPatch, "/apis/apis.kcp.io/v1alpha2/apiexports/core.platform-mesh.io" + dryRun,
				map[string]any{"spec": map[string]any{"permissionClaims": []any{map[string]any{"group": "", "resource": "secrets", "verbs": []any{"*"}}}}}},
			{"delete the platform's export", http.MethodDelete, "/apis/apis.kcp.io/v1alpha2/apiexports/core.platform-mesh.io" + dryRun, nil},
			{"delete the account-operator's workspace type", http.MethodDelete, wstype + "account-operator" + dryRun, nil},
			{"delete the admission policies", http.MethodDelete, "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies/core.platform-mesh.io-account-names" + dryRun, nil},
			{"bind every user to cluster-admin", http.MethodPost, "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings" + dryRun, crb},
		}, ""},
		{ws{"root", "root", "root"}, []op{
			{"change the security workspace type", http.MethodPatch, wstype + "security" + dryRun, map[string]any{"spec": map[string]any{"initializer": false}}},
			{"delete the orgs workspace", http.MethodDelete, workspace + "orgs" + dryRun, nil},
			{"create a workspace in root", http.MethodPost, "/apis/tenancy.kcp.io/v1alpha1/workspaces" + dryRun,
				map[string]any{"apiVersion": "tenancy.kcp.io/v1alpha1", "kind": "Workspace", "metadata": map[string]any{"name": "pwned"}}},
			{"make shard b unschedulable", http.MethodPatch, "/apis/core.kcp.io/v1alpha1/shards/b" + dryRun,
				map[string]any{"metadata": map[string]any{"annotations": map[string]any{"experimental.core.kcp.io/unschedulable": "true"}}}},
			{"list the shards", http.MethodGet, "/apis/core.kcp.io/v1alpha1/shards", nil},
			{"bind every user to cluster-admin", http.MethodPost, "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings" + dryRun, crb},
			{"read the secrets", http.MethodGet, "/api/v1/secrets", nil},
		}, ""},
	}
	var probes []probe
	for _, target := range targets {
		bases := []struct{ how, base string }{
			{"by path through the front proxy", p.proxy + "/clusters/" + target.w.path},
			{"by cluster id on the root shard", p.shardRoot + "/clusters/" + target.w.cluster},
			{"by cluster id on shard b", p.shardB + "/clusters/" + target.w.cluster},
		}
		for _, a := range tn.identities() {
			if target.skip != "" && a.token == target.skip {
				continue // the ops there are on the attacker's own organization
			}
			for _, b := range bases {
				for _, o := range target.ops {
					probes = append(probes, p.refused("shared workspaces", a.name, a.token, o.what+" in "+target.w.path+" "+b.how,
						call{method: o.method, url: b.base + o.path, body: o.body}))
				}
			}
		}
	}
	return probes
}
