package fidelity

import (
	"context"
	"encoding/json"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/kcp-dev/logicalcluster/v3"
	apisv1alpha2 "github.com/kcp-dev/sdk/apis/apis/v1alpha2"
	"github.com/kcp-dev/sdk/apis/apis/v1alpha2/permissionclaims"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// claimsSetup is a provider exporting sprockets and claiming configmaps
// (get, list, watch, create) and logicalclusters (get, list), a consumer
// binding it with the configmaps claim scoped to app=picked, and a
// provider ServiceAccount token with verb content on the export.
type claimsSetup struct {
	s                  *framework.Server
	provider, consumer framework.Workspace
	url, token         string
}

const scopedExport = "claims.example.com"

func newClaimsSetup(t *testing.T, prefix string) *claimsSetup {
	s := server(t)
	org := s.CreateOrg(t, prefix)
	ws := s.CreateWorkspaces(t, org.Path, "provider", "consumer")
	c := &claimsSetup{s: s, provider: ws[0], consumer: ws[1]}
	pk := s.KubectlFor(c.provider.Path)
	pk.Run(t, "apply", "-f", framework.Apigen(t, sprocketsCRD))
	pk.Run(t, "patch", "apiexport", scopedExport, "--type=merge", "-p", `{"spec":{"permissionClaims":[
{"group":"","resource":"configmaps","verbs":["get","list","watch","create"]},
{"group":"core.kcp.io","resource":"logicalclusters","verbs":["get","list"]}]}}`)
	s.WaitExportIdentity(t, c.provider, scopedExport)
	s.Bind(t, c.consumer, "sprockets", c.provider, scopedExport, []any{
		// update is accepted here but not claimed by the export: not allowed.
		map[string]any{"group": "", "resource": "configmaps", "verbs": []any{"get", "list", "watch", "create", "update"},
			"selector": map[string]any{"matchLabels": map[string]any{"app": "picked"}}, "state": "Accepted"},
		map[string]any{"group": "core.kcp.io", "resource": "logicalclusters", "verbs": []any{"get", "list"},
			"selector": map[string]any{"matchAll": true}, "state": "Accepted"},
	})
	c.url = s.EndpointSliceURL(t, c.provider, scopedExport)
	c.token = contentToken(t, s, c.provider, scopedExport)
	return c
}

// contentToken returns the token of a ServiceAccount of provider with
// every verb on the content of export.
func contentToken(t *testing.T, s *framework.Server, provider framework.Workspace, export string) string {
	t.Helper()
	pk := s.KubectlFor(provider.Path)
	pk.Run(t, "create", "serviceaccount", "controller", "-n", "default")
	pk.RunStdin(t, `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: export-content}
rules: [{apiGroups: [apis.kcp.io], resources: [apiexports/content], resourceNames: [`+export+`], verbs: ["*"]}]
`, "apply", "-f", "-")
	pk.Run(t, "create", "clusterrolebinding", "controller-content", "--clusterrole=export-content", "--serviceaccount=default:controller")
	return strings.TrimSpace(pk.Run(t, "create", "token", "controller", "-n", "default"))
}

// vw requests path under the virtual workspace with the provider's token.
func (c *claimsSetup) vw(t *testing.T, method, path string, body []byte) *framework.Response {
	t.Helper()
	ct := ""
	if body != nil {
		ct = "application/json"
	}
	return c.s.RequestURL(t, c.token, method, c.url+path, ct, body)
}

// TestPermissionClaimSelector checks kcp v0.32's scoped permission claims:
// objects a claim picks carry kcp's claimed.internal.apis.kcp.io label;
// through the APIExport virtual workspace the provider sees and touches
// only the objects the claim's selector picks, in one consumer and across
// consumers; what it creates gets the selector's labels (a contradicting
// label is refused); and it may use only the verbs both the export's and
// the binding's claim name. A claimed LogicalCluster is readable there.
func TestPermissionClaimSelector(t *testing.T) {
	t.Parallel()
	c := newClaimsSetup(t, "claims")
	s, consumer := c.s, c.consumer
	ck := s.KubectlFor(consumer.Path)
	ck.Run(t, "create", "configmap", "picked")
	ck.Run(t, "label", "configmap", "picked", "app=picked")
	ck.Run(t, "create", "configmap", "plain")

	key, value, err := permissionclaims.ToLabelKeyAndValue(logicalcluster.Name(c.provider.Cluster), scopedExport,
		apisv1alpha2.PermissionClaim{GroupResource: apisv1alpha2.GroupResource{Resource: "configmaps"}})
	if err != nil {
		t.Fatal(err)
	}
	labels := func(name string) map[string]string {
		var cm metav1.PartialObjectMetadata
		if err := json.Unmarshal([]byte(ck.Run(t, "get", "configmap", name, "-o", "json")), &cm); err != nil {
			t.Fatal(err)
		}
		return cm.Labels
	}
	framework.RequireEqual(t, labels("picked")[key], value, "claim label "+key+" on the configmap the claim picks")
	if v, ok := labels("plain")[key]; ok {
		t.Errorf("the configmap the claim does not pick carries the claim label %s=%s", key, v)
	}

	// One consumer: list, get.
	base := "/clusters/" + consumer.Cluster + "/api/v1/namespaces/default/configmaps"
	r := c.vw(t, "GET", base, nil)
	framework.RequireCode(t, r, "list configmaps of the consumer through the virtual workspace", 200)
	framework.RequireEqual(t, names(t, r), "picked", "configmaps listed through the virtual workspace (the claim picks app=picked)")
	framework.RequireCode(t, c.vw(t, "GET", base+"/picked", nil), "get the picked configmap through the virtual workspace", 200)
	framework.RequireCode(t, c.vw(t, "GET", base+"/plain", nil), "get a configmap the claim does not pick through the virtual workspace", 404)
	framework.RequireCode(t, c.vw(t, "GET", base+"/kube-root-ca.crt", nil), "get kube-root-ca.crt (not picked) through the virtual workspace", 404)

	// Across consumers.
	r = c.vw(t, "GET", "/clusters/*/api/v1/configmaps", nil)
	framework.RequireCode(t, r, "list configmaps across consumers through the virtual workspace", 200)
	framework.RequireEqual(t, names(t, r), "picked", "configmaps listed across consumers through the virtual workspace")

	// Create: the selector's labels are added; a contradicting one is refused.
	r = c.vw(t, "POST", base, framework.ConfigMapJSON(t, "from-provider", nil))
	framework.RequireCode(t, r, "create a configmap through the virtual workspace", 201)
	got := labels("from-provider")
	framework.RequireEqual(t, got["app"], "picked", "label app of the configmap created through the virtual workspace")
	framework.RequireEqual(t, got[key], value, "claim label of the configmap created through the virtual workspace")
	var other map[string]any
	if err := json.Unmarshal(framework.ConfigMapJSON(t, "contradicting", nil), &other); err != nil {
		t.Fatal(err)
	}
	other["metadata"].(map[string]any)["labels"] = map[string]any{"app": "other"}
	r = c.vw(t, "POST", base, framework.MustJSON(t, other))
	framework.RequireCode(t, r, "create a configmap with app=other through the virtual workspace", 403)
	framework.RequireContains(t, r.String(), "protected label app must have value picked", "refusal of a contradicting label")

	// Verbs: update is accepted by the binding but not claimed by the export.
	r = c.vw(t, "GET", base+"/picked", nil)
	var cm map[string]any
	r.JSON(t, &cm)
	r = c.vw(t, "PUT", base+"/picked", framework.MustJSON(t, cm))
	framework.RequireCode(t, r, "update a picked configmap through the virtual workspace (update not claimed by the export)", 403)
	framework.RequireCode(t, c.vw(t, "DELETE", base+"/picked", nil), "delete through the virtual workspace (not claimed)", 403)

	// A claimed LogicalCluster is readable.
	r = c.vw(t, "GET", "/clusters/"+consumer.Cluster+"/apis/core.kcp.io/v1alpha1/logicalclusters/cluster", nil)
	framework.RequireCode(t, r, "get the consumer's LogicalCluster through the virtual workspace", 200)

	// A watch through the virtual workspace: an object that stops matching
	// the selector is DELETED from it.
	cfg := framework.VirtualWorkspaceConfig(s.RESTConfig(t, ""), c.url, consumer.Cluster)
	cfg.BearerToken, cfg.BearerTokenFile = c.token, ""
	cms := framework.DynamicFor(t, cfg).Resource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace("default")
	list, err := cms.List(framework.CallContext(t), metav1.ListOptions{})
	if err != nil {
		t.Fatalf("listing configmaps through the virtual workspace: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	w, err := cms.Watch(ctx, metav1.ListOptions{ResourceVersion: list.GetResourceVersion()})
	if err != nil {
		t.Fatalf("watching configmaps through the virtual workspace: %v", err)
	}
	defer w.Stop()
	ck.Run(t, "label", "configmap", "from-provider", "app=elsewhere", "--overwrite")
	for deleted := false; !deleted; {
		select {
		case e, ok := <-w.ResultChan():
			if !ok {
				t.Fatalf("the watch through the virtual workspace ended without a DELETED event for from-provider")
			}
			m, _ := meta.Accessor(e.Object)
			deleted = e.Type == watch.Deleted && m != nil && m.GetName() == "from-provider"
		case <-ctx.Done():
			t.Fatalf("no DELETED event for from-provider after it stopped matching the claim's selector")
		}
	}

	// Rejecting the claim takes the labels off and the access away.
	ck.Run(t, "patch", "apibinding", "sprockets", "--type=json", "-p", `[{"op":"replace","path":"/spec/permissionClaims/0/state","value":"Rejected"}]`)
	framework.Eventually(t, 30*time.Second, 250*time.Millisecond, "the claim label to leave the picked configmap", func() (bool, string) {
		l := labels("picked")
		_, ok := l[key]
		return !ok, framework.Compact(l)
	})
	framework.Eventually(t, 30*time.Second, 250*time.Millisecond, "configmaps to be refused through the virtual workspace", func() (bool, string) {
		r := c.vw(t, "GET", base, nil)
		return r.Err == nil && r.Code == 403, r.String()
	})
}

// TestAPIExportVirtualWorkspaceDiscovery checks that discovery through the
// APIExport virtual workspace works with the provider's ServiceAccount
// token and shows, as kcp's, what the export serves there: its resources,
// the claimed resources and APIBindings, and no other group.
func TestAPIExportVirtualWorkspaceDiscovery(t *testing.T) {
	t.Parallel()
	c := newClaimsSetup(t, "claims-discovery")
	for _, cluster := range []string{"*", c.consumer.Cluster} {
		k := &framework.Kubectl{Kubeconfig: c.s.Kubeconfig, CacheDir: t.TempDir(),
			GlobalArgs: []string{"--context", "shard-base", "--server", c.url + "/clusters/" + cluster, "--token", c.token}}
		out := k.Run(t, "api-resources", "--no-headers", "-o", "name")
		framework.RequireEqual(t, strings.Join(strings.Fields(out), " "),
			"configmaps apibindings.apis.kcp.io sprockets.claims.example.com logicalclusters.core.kcp.io",
			"kubectl api-resources through the virtual workspace on "+cluster)
	}
	framework.RequireCode(t, c.vw(t, "GET", "/clusters/*/apis/tenancy.kcp.io", nil), "discovery of a group the export does not serve", 404)
	r := c.vw(t, "GET", "/clusters/*/apis", nil)
	framework.RequireCode(t, r, "the group list through the virtual workspace", 200)
	var groups metav1.APIGroupList
	r.JSON(t, &groups)
	var got []string
	for _, g := range groups.Groups {
		got = append(got, g.Name)
	}
	framework.RequireEqual(t, strings.Join(got, ","), "core.kcp.io,apis.kcp.io,claims.example.com", "groups listed through the virtual workspace")
	// OpenAPI v3: the served group versions, under the virtual workspace.
	r = c.vw(t, "GET", "/clusters/*/openapi/v3", nil)
	framework.RequireCode(t, r, "the OpenAPI v3 index through the virtual workspace", 200)
	var index struct {
		Paths map[string]struct {
			ServerRelativeURL string `json:"serverRelativeURL"`
		} `json:"paths"`
	}
	r.JSON(t, &index)
	var paths []string
	for p, v := range index.Paths {
		paths = append(paths, p)
		framework.RequireContains(t, v.ServerRelativeURL, "/services/apiexport/"+c.provider.Cluster+"/"+scopedExport+"/clusters/*/openapi/v3/"+p,
			"serverRelativeURL of "+p)
	}
	sort.Strings(paths)
	framework.RequireEqual(t, strings.Join(paths, ","),
		"api,api/v1,apis,apis/apis.kcp.io,apis/apis.kcp.io/v1alpha1,apis/apis.kcp.io/v1alpha2,apis/claims.example.com/v1,apis/core.kcp.io,apis/core.kcp.io/v1alpha1,version",
		"paths of the OpenAPI v3 index through the virtual workspace (kcp's: discovery documents, groups, group versions)")
	k := &framework.Kubectl{Kubeconfig: c.s.Kubeconfig, CacheDir: t.TempDir(),
		GlobalArgs: []string{"--context", "shard-base", "--server", c.url + "/clusters/*", "--token", c.token}}
	framework.RequireContains(t, k.Run(t, "explain", "sprockets"), "KIND:       Sprocket", "kubectl explain sprockets through the virtual workspace")
	// Without credentials: 401, as any request.
	framework.RequireCode(t, c.s.RequestURL(t, "", "GET", c.url+"/clusters/*/apis", "", nil), "discovery through the virtual workspace without a token", 401)
}

// names returns the sorted names of a list response, comma separated.
func names(t *testing.T, r *framework.Response) string {
	t.Helper()
	var l metav1.PartialObjectMetadataList
	r.JSON(t, &l)
	var out []string
	for _, it := range l.Items {
		out = append(out, it.Name)
	}
	return strings.Join(out, ",")
}
