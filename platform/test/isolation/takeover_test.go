package isolation

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/meshplane/meshplane/apis/fga"
)

// takeoverProbes are the issue's takeovers, each played for real against
// acme (or one of its spare accounts) and judged by the victim's state as
// the admin reads it. Each grants a user name of its own, so one leak
// does not show as another's.
func (p *platform) takeoverProbes(tn *tenants) []probe {
	bob := "bob (owner of bobcorp)"
	takeover := func(issue, what string, run func(ctx context.Context) verdict) probe {
		return probe{area: "takeover", issue: issue, who: bob, what: what, run: run}
	}
	return []probe{
		takeover(itemStoreRef, "an AuthorizationModel in bobcorp with storeRef {name: acme, cluster: root:orgs} and an owner tuple on acme",
			func(ctx context.Context) verdict {
				return p.modelIntoStore(ctx, tn, "acme", "root:orgs", "iso-t1-path")
			}),
		takeover(itemStoreRef, "an AuthorizationModel in bobcorp with storeRef {name: acme, cluster: <root:orgs' cluster id>} and an owner tuple on acme",
			func(ctx context.Context) verdict {
				return p.modelIntoStore(ctx, tn, "acme", tn.orgsCluster, "iso-t1-id")
			}),
		takeover("", "an AuthorizationModel in bobcorp for his own Store with an owner tuple on acme",
			func(ctx context.Context) verdict {
				return p.modelIntoStore(ctx, tn, "bobcorp", "root:orgs", "iso-own-model")
			}),
		takeover("", "a Store in bobcorp with an owner tuple on acme, then deleted",
			func(ctx context.Context) verdict { return p.storeIDTakeover(ctx, tn, "own", "iso-own-store", false) }),
		takeover(itemMasters, "a Workspace in bobcorp with spec.cluster of acme's account spare3, then deleted",
			func(ctx context.Context) verdict { return p.adoptCluster(ctx, tn) }),
		takeover(itemPath, "annotate his account lab's LogicalCluster kcp.io/path=<acme's account spare4>",
			func(ctx context.Context) verdict { return p.hijackPath(ctx, tn) }),
		takeover(itemSystemOnly, "a Workspace in bobcorp with spec.URL of OpenFGA's API",
			func(ctx context.Context) verdict { return p.workspaceURL(ctx, tn) }),
	}
}

// storeIDProbe is takeover 2, run after the others: today it deletes
// acme's OpenFGA store, which would blind their judgement.
func (p *platform) storeIDProbe(tn *tenants) probe {
	return probe{area: "takeover", issue: itemStoreID, who: "bob (owner of bobcorp)",
		what: "a Store in bobcorp whose status.storeId is acme's store id, with an owner tuple on acme, then deleted",
		run:  func(ctx context.Context) verdict { return p.storeIDTakeover(ctx, tn, "evil", "iso-t2", true) }}
}

// accountInfoProbe: bob rewrites his account decoy's AccountInfo to say
// it is acme's account in acme's store, and deletes the Account: the
// security-operator's terminator must not delete acme's tuples (carol's
// membership of acme, a tuple on acme's account, must still count).
func (p *platform) accountInfoProbe(tn *tenants) probe {
	return probe{area: "takeover", issue: itemAccountInfo, who: "bob (owner of bobcorp)",
		what: "rewrite his account decoy's AccountInfo to acme's account and store, then delete the Account",
		run: func(ctx context.Context) verdict {
			member := func() (bool, string) {
				a := p.admin(ctx, http.MethodPost, "/clusters/"+tn.acme.path+"/apis/authorization.k8s.io/v1/subjectaccessreviews", map[string]any{
					"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
					"spec": map[string]any{"user": tn.acme.member, "groups": []any{"system:authenticated"},
						"resourceAttributes": map[string]any{"verb": "get", "resource": "configmaps", "namespace": ns, "name": "fresh-" + randomHex(8)}}})
				var r struct{ Status struct{ Allowed bool } }
				_ = a.decode(&r)
				return r.Status.Allowed, a.String()
			}
			if ok, detail := member(); !ok {
				return verdict{detail: "cannot judge: carol is no member of acme before the attack: " + detail, serverError: true}
			}
			a := p.do(ctx, call{method: http.MethodPatch, url: p.proxy + "/clusters/" + tn.decoy.path + "/apis/core.platform-mesh.io/v1alpha1/accountinfos/account",
				token: tn.bob.ownerToken, body: map[string]any{"spec": map[string]any{"fga": map[string]any{"store": map[string]any{"id": tn.acme.storeID}},
					"account": map[string]any{"name": tn.acme.name, "originClusterId": tn.acme.origin}}}})
			if !a.ok() {
				return verdict{detail: "refused: " + a.String()}
			}
			url := p.proxy + "/clusters/" + tn.bob.path + "/apis/core.platform-mesh.io/v1alpha1/accounts/decoy"
			p.do(ctx, call{method: http.MethodDelete, url: url, token: tn.bob.ownerToken})
			// The terminator has run once the Account is gone (its
			// finalizer waits for the workspace, the workspace for its
			// terminators).
			p.pollUntil(90*time.Second, func() bool {
				return p.do(ctx, call{method: http.MethodGet, url: url, token: tn.bob.ownerToken}).code == http.StatusNotFound
			})
			if ok, detail := member(); !ok {
				return verdict{leak: true, detail: "after the deletion oidc-carol is no longer a member of acme (its tuples were deleted): " + detail}
			}
			return verdict{detail: "acme's tuples stay"}
		}}
}

// orgInfoProbe: bob rewrites his organization's AccountInfo to say it is
// acme, then creates an account: it must not get acme's workspace type
// (nor, with it, tuples in acme's store).
func (p *platform) orgInfoProbe(tn *tenants) probe {
	return probe{area: "takeover", issue: itemAccountInfo, who: "bob (owner of bobcorp)",
		what: "rewrite his org's AccountInfo to organization acme and acme's store, then create an account",
		run: func(ctx context.Context) verdict {
			a := p.do(ctx, call{method: http.MethodPatch, url: p.proxy + "/clusters/" + tn.bob.path + "/apis/core.platform-mesh.io/v1alpha1/accountinfos/account",
				token: tn.bob.ownerToken, body: map[string]any{"spec": map[string]any{"fga": map[string]any{"store": map[string]any{"id": tn.acme.storeID}},
					"organization": map[string]any{"name": tn.acme.name, "originClusterId": tn.acme.origin, "generatedClusterId": tn.acme.cluster, "path": tn.acme.path}}}})
			if !a.ok() {
				return verdict{detail: "refused: " + a.String()}
			}
			accounts := p.proxy + "/clusters/" + tn.bob.path + "/apis/core.platform-mesh.io/v1alpha1/accounts"
			a = p.do(ctx, call{method: http.MethodPost, url: accounts, token: tn.bob.ownerToken, body: map[string]any{
				"apiVersion": "core.platform-mesh.io/v1alpha1", "kind": "Account", "metadata": map[string]any{"name": "sneak"},
				"spec": map[string]any{"type": "account", "displayName": "sneak"}}})
			if !a.ok() {
				return verdict{detail: "account refused: " + a.String()}
			}
			// The operator has decided once the Workspace exists or the
			// Account says why not.
			var typ string
			p.pollUntil(60*time.Second, func() bool {
				var w struct {
					Spec struct{ Type struct{ Name, Path string } }
				}
				if p.do(ctx, call{method: http.MethodGet, url: p.proxy + "/clusters/" + tn.bob.path + "/apis/tenancy.kcp.io/v1alpha1/workspaces/sneak", token: tn.bob.ownerToken}).decode(&w) == nil && w.Spec.Type.Name != "" {
					typ = w.Spec.Type.Path + ":" + w.Spec.Type.Name
					return true
				}
				return p.hasFailed(ctx, accounts+"/sneak", tn.bob.ownerToken)
			})
			if typ == "root:orgs:"+tn.acme.name+"-account" {
				return verdict{leak: true, detail: "bob's new account's workspace has acme's type " + typ}
			}
			return verdict{detail: "workspace type " + typ}
		}}
}

// hasFailed: an Account has a condition in Error.
func (p *platform) hasFailed(ctx context.Context, url, token string) bool {
	var acc struct {
		Status struct{ Conditions []condition }
	}
	_ = p.do(ctx, call{method: http.MethodGet, url: url, token: token}).decode(&acc)
	for _, c := range acc.Status.Conditions {
		if c.Status == "False" && c.Reason == "Error" {
			return true
		}
	}
	return false
}

// workspaceURL: a Workspace whose spec.URL bob wrote is not a mount;
// requests below it must not go there.
func (p *platform) workspaceURL(ctx context.Context, tn *tenants) verdict {
	url := p.proxy + "/clusters/" + tn.bob.path + "/apis/tenancy.kcp.io/v1alpha1/workspaces"
	a := p.do(ctx, call{method: http.MethodPost, url: url, token: tn.bob.ownerToken, body: map[string]any{
		"apiVersion": "tenancy.kcp.io/v1alpha1", "kind": "Workspace", "metadata": map[string]any{"name": "redirect"},
		"spec": map[string]any{"URL": p.openfga, "type": map[string]any{"name": "universal", "path": "root"}}}})
	if !a.ok() {
		return verdict{detail: "refused: " + a.String()}
	}
	p.pollUntil(60*time.Second, func() bool {
		g := p.do(ctx, call{method: http.MethodGet, url: url + "/redirect", token: tn.bob.ownerToken})
		var w struct{ Status struct{ Phase string } }
		_ = g.decode(&w)
		return w.Status.Phase == "Ready"
	})
	for _, base := range []string{p.proxy, p.shardURL(tn.bob.shard)} {
		g := p.do(ctx, call{method: http.MethodGet, url: base + "/clusters/" + tn.bob.path + ":redirect/stores", token: tn.bob.ownerToken})
		if g.ok() && strings.Contains(string(g.body), `"stores"`) {
			return verdict{leak: true, detail: "reached OpenFGA: " + g.String()}
		}
	}
	return verdict{detail: "created: " + a.String()}
}

// sar asks, as the admin, whether user may get a secret in acme no one
// asked about before (no cached answer).
func (p *platform) sar(ctx context.Context, w ws, user string) (bool, string) {
	a := p.admin(ctx, http.MethodPost, "/clusters/"+w.path+"/apis/authorization.k8s.io/v1/subjectaccessreviews", map[string]any{
		"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
		"spec": map[string]any{"user": user, "groups": []any{"system:authenticated"},
			"resourceAttributes": map[string]any{"verb": "get", "resource": "secrets", "namespace": ns, "name": "fresh-" + randomHex(8)}}})
	var r struct {
		Status struct {
			Allowed bool
			Reason  string
		}
	}
	if err := a.decode(&r); err != nil || !a.ok() {
		return false, fmt.Sprintf("SubjectAccessReview for %s in %s: %s", user, w.path, a)
	}
	return r.Status.Allowed, fmt.Sprintf("SubjectAccessReview for %s in %s: allowed=%v %s", user, w.path, r.Status.Allowed, r.Status.Reason)
}

// watchVictim polls until the user is allowed in acme (a leak: returns
// true) or the attacker's object has been looked at by the operator
// (observed) or bound runs out; then it asks once more.
func (p *platform) watchVictim(ctx context.Context, w ws, user string, observed func() bool, bound time.Duration) (bool, string) {
	deadline := time.Now().Add(bound)
	for time.Now().Before(deadline) {
		if ok, detail := p.sar(ctx, w, user); ok {
			return true, detail
		}
		if observed() {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	// The operator has acted (or not within the bound): a write it made
	// reaches OpenFGA before its status, so this answer is final.
	return p.sar(ctx, w, user)
}

// hasConditions: the operator has handled the object at url (read as
// token) for its current generation: its Ready condition says it refused
// it, or its status lists the tuples it wrote (it reports Ready before
// writing them).
func (p *platform) hasConditions(ctx context.Context, url, token string) bool {
	a := p.do(ctx, call{method: http.MethodGet, url: url, token: token})
	var obj struct {
		Metadata struct{ Generation int64 }
		Status   struct {
			Conditions    []condition
			ManagedTuples []any
		}
	}
	if a.decode(&obj) != nil {
		return false
	}
	for _, c := range obj.Status.Conditions {
		if c.Type == "Ready" && c.ObservedGeneration >= obj.Metadata.Generation {
			return c.Status == "False" || len(obj.Status.ManagedTuples) > 0
		}
	}
	return false
}

// modelIntoStore is takeover 1.
func (p *platform) modelIntoStore(ctx context.Context, tn *tenants, store, storeCluster, grantee string) verdict {
	name := "evil-" + randomHex(4)
	url := p.proxy + "/clusters/" + tn.bob.path + "/apis/core.platform-mesh.io/v1alpha1/authorizationmodels"
	a := p.do(ctx, call{method: http.MethodPost, url: url, token: tn.bob.ownerToken, body: map[string]any{
		"apiVersion": "core.platform-mesh.io/v1alpha1", "kind": "AuthorizationModel", "metadata": map[string]any{"name": name},
		"spec": map[string]any{
			"storeRef": map[string]any{"name": store, "cluster": storeCluster},
			"model":    "module " + strings.ReplaceAll(name, "-", "_") + "\n\ntype " + strings.ReplaceAll(name, "-", "_") + "_thing\n  relations\n    define owner: [user]\n",
			"tuples":   []any{map[string]any{"object": tn.acme.fgaObject(), "relation": "owner", "user": "user:" + grantee}},
		}}})
	if !a.ok() {
		return verdict{detail: "refused: " + a.String()}
	}
	leak, detail := p.watchVictim(ctx, tn.acme.orgWS(), grantee, func() bool { return p.hasConditions(ctx, url+"/"+name, tn.bob.ownerToken) }, 45*time.Second)
	return verdict{leak: leak, detail: detail}
}

// storeIDTakeover is takeover 2: bob's Store (its status pointed at
// acme's store id when pointAt is set) with a tuple making grantee acme's
// owner; then bob deletes it, and acme's OpenFGA store must still be
// there.
func (p *platform) storeIDTakeover(ctx context.Context, tn *tenants, name, grantee string, pointAt bool) verdict {
	url := p.proxy + "/clusters/" + tn.bob.path + "/apis/core.platform-mesh.io/v1alpha1/stores"
	a := p.do(ctx, call{method: http.MethodPost, url: url, token: tn.bob.ownerToken, body: map[string]any{
		"apiVersion": "core.platform-mesh.io/v1alpha1", "kind": "Store", "metadata": map[string]any{"name": name},
		"spec": map[string]any{"coreModule": fga.CoreModule,
			"tuples": []any{map[string]any{"object": tn.acme.fgaObject(), "relation": "owner", "user": "user:" + grantee}}}}})
	if !a.ok() {
		return verdict{detail: "refused: " + a.String()}
	}
	patched := answer{code: http.StatusOK}
	for range 20 { // the operator may write the status meanwhile: retry on conflict
		if !pointAt {
			break
		}
		patched = p.do(ctx, call{method: http.MethodPatch, url: url + "/" + name + "/status", token: tn.bob.ownerToken,
			body: map[string]any{"status": map[string]any{"storeId": tn.acme.storeID}}})
		if patched.code != http.StatusConflict {
			break
		}
	}
	var v verdict
	if !patched.ok() {
		v.detail = "status patch refused: " + patched.String()
	} else {
		leak, detail := p.watchVictim(ctx, tn.acme.orgWS(), grantee, func() bool { return p.hasConditions(ctx, url+"/"+name, tn.bob.ownerToken) }, 45*time.Second)
		v = verdict{leak: leak, detail: detail}
	}
	// Deleting bob's Store must leave acme's store alone.
	p.do(ctx, call{method: http.MethodDelete, url: url + "/" + name, token: tn.bob.ownerToken})
	p.pollUntil(60*time.Second, func() bool {
		return p.do(ctx, call{method: http.MethodGet, url: url + "/" + name, token: tn.bob.ownerToken}).code == http.StatusNotFound
	})
	gone, detail := p.openFGAStoreGone(ctx, tn.acme.storeID)
	if gone {
		v.leak = true
		v.detail += "; after bob deleted his Store, acme's OpenFGA store is gone: " + detail
	} else {
		v.detail += "; acme's OpenFGA store afterwards: " + detail
	}
	return v
}

// openFGAStoreGone reads acme's store from OpenFGA as the platform does,
// with the preshared key in the file platform.env names. An answer other
// than the store or its absence counts as gone: a check that cannot look
// must not pass.
func (p *platform) openFGAStoreGone(ctx context.Context, id string) (bool, string) {
	c := call{method: http.MethodGet, url: p.openfga + "/stores/" + id}
	if f := p.env["OPENFGA_PRESHARED_KEY_FILE"]; f != "" {
		key, err := os.ReadFile(f)
		if err != nil {
			return true, "reading OpenFGA's preshared key: " + err.Error()
		}
		c.token = strings.TrimSpace(string(key))
	}
	a := p.do(ctx, c)
	var s struct {
		DeletedAt string `json:"deleted_at"`
	}
	_ = a.decode(&s)
	if a.code != http.StatusOK && a.code != http.StatusNotFound {
		return true, "OpenFGA did not answer the store read: " + a.String()
	}
	return a.code == http.StatusNotFound || s.DeletedAt != "", a.String()
}

// adoptCluster: bob's Workspace naming spare3's logical cluster, deleted
// again; spare3 must stay Ready, not deleting, and alice's.
func (p *platform) adoptCluster(ctx context.Context, tn *tenants) verdict {
	url := p.proxy + "/clusters/" + tn.bob.path + "/apis/tenancy.kcp.io/v1alpha1/workspaces"
	a := p.do(ctx, call{method: http.MethodPost, url: url, token: tn.bob.ownerToken, body: map[string]any{
		"apiVersion": "tenancy.kcp.io/v1alpha1", "kind": "Workspace", "metadata": map[string]any{"name": "grab"},
		"spec": map[string]any{"cluster": tn.spare3.cluster, "type": map[string]any{"name": "universal", "path": "root"}}}})
	detail := "create: " + a.String()
	if a.ok() {
		// The scheduler has looked at it once its phase is set.
		p.pollUntil(30*time.Second, func() bool {
			g := p.do(ctx, call{method: http.MethodGet, url: url + "/grab", token: tn.bob.ownerToken})
			var w struct{ Status struct{ Phase string } }
			_ = g.decode(&w)
			return w.Status.Phase != ""
		})
		p.do(ctx, call{method: http.MethodDelete, url: url + "/grab", token: tn.bob.ownerToken})
		p.pollUntil(60*time.Second, func() bool {
			return p.do(ctx, call{method: http.MethodGet, url: url + "/grab", token: tn.bob.ownerToken}).code == http.StatusNotFound
		})
	}
	lc := p.do(ctx, call{method: http.MethodGet, url: p.shardURL(tn.spare3.shard) + "/clusters/" + tn.spare3.cluster + "/apis/core.kcp.io/v1alpha1/logicalclusters/cluster",
		token: p.tokens["shard-admin"]})
	var obj struct {
		Metadata struct {
			DeletionTimestamp string
			Annotations       map[string]string
		}
		Status struct{ Phase string }
	}
	_ = lc.decode(&obj)
	if !lc.ok() || obj.Metadata.DeletionTimestamp != "" || obj.Status.Phase != "Ready" {
		return verdict{leak: true, detail: fmt.Sprintf("%s; spare3's LogicalCluster afterwards: %s phase %q deletion %q", detail, lc, obj.Status.Phase, obj.Metadata.DeletionTimestamp)}
	}
	return verdict{detail: detail + "; spare3 stays Ready"}
}

// hijackPath is takeover 4: the stored annotation, and where spare4's
// path resolves afterwards.
func (p *platform) hijackPath(ctx context.Context, tn *tenants) verdict {
	a := p.do(ctx, call{method: http.MethodPatch, url: p.proxy + "/clusters/" + tn.lab.path + "/apis/core.kcp.io/v1alpha1/logicalclusters/cluster",
		token: tn.bob.ownerToken, body: map[string]any{"metadata": map[string]any{"annotations": map[string]any{"kcp.io/path": tn.spare4.path}}}})
	if !a.ok() {
		return verdict{detail: "refused: " + a.String()}
	}
	var lc struct {
		Metadata struct{ Annotations map[string]string }
	}
	_ = a.decode(&lc)
	if got := lc.Metadata.Annotations["kcp.io/path"]; got == tn.spare4.path {
		var where []string
		for _, base := range []string{p.proxy, p.shardRoot, p.shardB} {
			var r struct {
				Metadata struct{ Annotations map[string]string }
			}
			_ = p.do(ctx, call{method: http.MethodGet, url: base + "/clusters/" + tn.spare4.path + "/apis/core.kcp.io/v1alpha1/logicalclusters/cluster",
				token: p.tokens["shard-admin"]}).decode(&r)
			where = append(where, base+" -> "+r.Metadata.Annotations["kcp.io/cluster"])
		}
		return verdict{leak: true, detail: fmt.Sprintf("stored kcp.io/path=%s on bob's cluster %s; %s resolves: %s (spare4 is %s)",
			got, tn.lab.cluster, tn.spare4.path, strings.Join(where, ", "), tn.spare4.cluster)}
	}
	return verdict{detail: "stored kcp.io/path=" + lc.Metadata.Annotations["kcp.io/path"]}
}

// pollUntil waits for cond, at most bound (a wait, not an assertion).
func (p *platform) pollUntil(bound time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(bound)
	for time.Now().Before(deadline) {
		if cond() {
			return true
		}
		time.Sleep(300 * time.Millisecond)
	}
	return false
}
