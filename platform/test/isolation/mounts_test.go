package isolation

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/meshplane/meshplane/platform/launcher"
)

// mountTarget is an internal address bob points a mount at, and what in
// an answer shows the request got there.
type mountTarget struct {
	name, url, path string
	reached         func(body string) bool
}

// mountProbes is takeover 5: bob's mount objects in bobcorp whose
// status.URL is an internal address, each mounted by a root:universal
// Workspace; requests below those workspaces must not reach it, and the
// answer for an open port must not differ from the one for a closed port.
func (p *platform) mountProbes(t *testing.T, ctx context.Context, tn *tenants) []probe {
	t.Helper()
	ports := launcher.Ports{Base: p.base}
	targets := []mountTarget{
		{"m-openfga", p.openfga, "/stores", func(b string) bool { return strings.Contains(b, `"stores"`) }},
		{"m-etcd", fmt.Sprintf("http://127.0.0.1:%d", p.base+1), "/version", func(b string) bool { return strings.Contains(b, "etcdserver") }},
		{"m-webhook-metrics", p.env["REBAC_AUTHZ_WEBHOOK_METRICS_URL"], "", func(b string) bool { return strings.Contains(b, "# TYPE") }},
		{"m-operator-health", fmt.Sprintf("http://127.0.0.1:%d", p.base+4), "/readyz", func(b string) bool { return strings.Contains(b, "ok") }},
		{"m-core", p.shardRoot, "/clusters/" + tn.acme.path + "/api/v1/namespaces/" + ns + "/secrets", func(b string) bool { return strings.Contains(b, "SecretList") }},
		{"m-shard-b", p.shardB, "/clusters/" + tn.acme.accountCluster + "/api/v1/namespaces/" + ns + "/secrets", func(b string) bool { return strings.Contains(b, "SecretList") }},
		{"m-closed", fmt.Sprintf("http://127.0.0.1:%d", ports.Base+13), "/", func(string) bool { return false }},
	}
	bob, token := "bob (owner of bobcorp)", tn.bob.ownerToken
	base := p.proxy + "/clusters/" + tn.bob.path
	p.must(t, ctx, "bob's mount CRD", call{method: http.MethodPost, url: base + "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", token: token,
		body: mountCRD()})
	crURL := base + "/apis/test.mounts.meshplane.io/v1alpha1/mountpoints"
	eventually(t, 30*time.Second, "bob's mount CRD served", func() (bool, string) {
		a := p.do(ctx, call{method: http.MethodGet, url: crURL, token: token})
		return a.ok(), a.String()
	})
	for _, m := range targets {
		p.must(t, ctx, "bob's mount object "+m.name, call{method: http.MethodPost, url: crURL, token: token, body: map[string]any{
			"apiVersion": "test.mounts.meshplane.io/v1alpha1", "kind": "Mountpoint",
			"metadata": map[string]any{"name": m.name, "annotations": map[string]any{"experimental.tenancy.kcp.io/is-mount": "true"}}, "spec": map[string]any{}}})
		p.must(t, ctx, "bob's mount status "+m.name, call{method: http.MethodPatch, url: crURL + "/" + m.name + "/status", token: token,
			body: map[string]any{"status": map[string]any{"phase": "Ready", "URL": m.url}}})
		// A mount the platform refuses may be refused right here: then
		// there is nothing to probe below it but the refusal.
		p.do(ctx, call{method: http.MethodPost, url: base + "/apis/tenancy.kcp.io/v1alpha1/workspaces", token: token, body: map[string]any{
			"apiVersion": "tenancy.kcp.io/v1alpha1", "kind": "Workspace", "metadata": map[string]any{"name": m.name},
			"spec": map[string]any{"type": map[string]any{"name": "universal", "path": "root"},
				"mount": map[string]any{"ref": map[string]any{"apiVersion": "test.mounts.meshplane.io/v1alpha1", "kind": "Mountpoint", "name": m.name}}}}})
	}
	// The core has looked at each mount once its Workspace has the
	// WorkspaceMountReady condition (or it is gone).
	p.pollUntil(30*time.Second, func() bool {
		for _, m := range targets {
			a := p.do(ctx, call{method: http.MethodGet, url: base + "/apis/tenancy.kcp.io/v1alpha1/workspaces/" + m.name, token: token})
			var w struct {
				Status struct{ Conditions []condition }
			}
			_ = a.decode(&w)
			seen := a.code == http.StatusNotFound
			for _, c := range w.Status.Conditions {
				seen = seen || c.Type == "WorkspaceMountReady"
			}
			if !seen {
				return false
			}
		}
		return true
	})
	var probes []probe
	closed := map[string]string{}
	for _, via := range []string{p.proxy, p.shardURL(tn.bob.shard)} {
		closed[via] = strings.ReplaceAll(p.do(ctx, call{method: http.MethodGet, url: via + "/clusters/" + tn.bob.path + ":m-closed/", token: token}).String(), "m-closed", "<mount>")
	}
	for _, m := range targets[:len(targets)-1] {
		for _, via := range []string{p.proxy, p.shardURL(tn.bob.shard)} {
			c := call{method: http.MethodGet, url: via + "/clusters/" + tn.bob.path + ":" + m.name + m.path, token: token}
			probes = append(probes, probe{area: "takeover", issue: itemMounts, who: bob, what: "reach " + m.url + m.path + " through a mount (GET " + c.url + ")",
				run: func(ctx context.Context) verdict {
					a := p.do(ctx, c)
					if a.ok() && m.reached(string(a.body)) {
						return verdict{leak: true, detail: "reached it: " + a.String()}
					}
					// The answer must not tell an open port from a closed one.
					got := strings.ReplaceAll(a.String(), m.name, "<mount>")
					if got != closed[via] {
						return verdict{leak: true, detail: fmt.Sprintf("the answer differs from a closed port's: %q vs %q", got, closed[via])}
					}
					return verdict{detail: a.String()}
				}})
		}
	}
	return probes
}

func mountCRD() map[string]any {
	return map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": "mountpoints.test.mounts.meshplane.io"},
		"spec": map[string]any{
			"group": "test.mounts.meshplane.io", "scope": "Cluster",
			"names": map[string]any{"kind": "Mountpoint", "plural": "mountpoints", "singular": "mountpoint"},
			"versions": []any{map[string]any{
				"name": "v1alpha1", "served": true, "storage": true,
				"subresources": map[string]any{"status": map[string]any{}},
				"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "properties": map[string]any{
					"spec": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true},
					"status": map[string]any{"type": "object", "properties": map[string]any{
						"URL": map[string]any{"type": "string"}, "phase": map[string]any{"type": "string"}}},
				}}},
			}},
		},
	}
}
