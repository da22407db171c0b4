package fidelity

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// TestAPIResourceSchemaVirtualWorkspace checks kcp's APIResourceSchema
// virtual workspace (/services/apiresourceschema/<consumer>/clusters/...):
// discovery shows apiresourceschemas read-only; a consumer reads the
// schemas its bindings bind (list, get, watch) and no other; writes are
// refused; a provider's ServiceAccount is refused until the consumer grants
// its global name system:kcp:serviceaccount:<cluster>:<ns>:<name> access
// and reading apibindings.
func TestAPIResourceSchemaVirtualWorkspace(t *testing.T) {
	t.Parallel()
	s := server(t)
	org := s.CreateOrg(t, "schemavw")
	ws := s.CreateWorkspaces(t, org.Path, "provider", "other", "consumer")
	provider, other, consumer := ws[0], ws[1], ws[2]
	s.ExportCRD(t, provider, gadgetsCRD, "bind.example.com")
	s.ExportCRD(t, other, sprocketsCRD, "claims.example.com")
	s.Bind(t, consumer, "gadgets", provider, "bind.example.com", nil)
	schema := strings.TrimSpace(s.KubectlFor(provider.Path).Run(t, "get", "apiexport", "bind.example.com", "-o", "jsonpath={.spec.resources[0].schema}"))
	notBound := strings.TrimSpace(s.KubectlFor(other.Path).Run(t, "get", "apiexport", "claims.example.com", "-o", "jsonpath={.spec.resources[0].schema}"))

	vw := s.BaseURL + "/services/apiresourceschema/" + consumer.Cluster + "/clusters/" + consumer.Cluster
	k := &framework.Kubectl{Kubeconfig: s.Kubeconfig, CacheDir: t.TempDir(), GlobalArgs: []string{"--context", "shard-base", "--server", vw}}
	framework.RequireEqual(t, strings.Join(strings.Fields(k.Run(t, "api-resources", "--no-headers", "-o", "wide")), " "),
		"apiresourceschemas apis.kcp.io/v1alpha1 false APIResourceSchema get,list,watch kcp",
		"kubectl api-resources through the APIResourceSchema virtual workspace")

	framework.RequireEqual(t, strings.TrimSpace(k.Run(t, "get", "apiresourceschemas", "-o", "name")), "apiresourceschema.apis.kcp.io/"+schema,
		"the schemas listed through the virtual workspace (the one bound)")
	k.Run(t, "get", "apiresourceschema", schema)
	out, stderr, err := k.RunErr(t, "get", "apiresourceschema", notBound)
	framework.RequireFails(t, out, stderr, err, "getting a schema the consumer does not bind", "NotFound")
	out, stderr, err = k.RunErr(t, "delete", "apiresourceschema", schema)
	framework.RequireFails(t, out, stderr, err, "deleting a schema through the virtual workspace", "Forbidden")
	r := s.AdminRequest(t, "GET", strings.TrimPrefix(vw, s.BaseURL)+"/apis/apis.kcp.io/v1alpha1/apiresourceschemas?watch=true&resourceVersion=0&timeoutSeconds=2", nil)
	framework.RequireCode(t, r, "watching schemas through the virtual workspace", 200)
	framework.RequireContains(t, r.String(), `"type":"ADDED"`, "watch through the virtual workspace")
	if strings.Contains(r.String(), notBound) {
		t.Errorf("the watch shows a schema the consumer does not bind: %s", r)
	}

	// The provider's ServiceAccount.
	pk := s.KubectlFor(provider.Path)
	pk.Run(t, "create", "serviceaccount", "operator", "-n", "default")
	token := strings.TrimSpace(pk.Run(t, "create", "token", "operator", "-n", "default"))
	list := vw + "/apis/apis.kcp.io/v1alpha1/apiresourceschemas"
	framework.RequireCode(t, s.RequestURL(t, token, "GET", list, "", nil), "the provider's ServiceAccount before any grant", 403)
	ck := s.KubectlFor(consumer.Path)
	ck.RunStdin(t, `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: apibinding-reader}
rules:
- {nonResourceURLs: ["/"], verbs: [access]}
- {apiGroups: [apis.kcp.io], resources: [apibindings], verbs: [get, list, watch]}
`, "apply", "-f", "-")
	ck.Run(t, "create", "clusterrolebinding", "provider-operator", "--clusterrole=apibinding-reader",
		"--user=system:kcp:serviceaccount:"+provider.Cluster+":default:operator")
	framework.Eventually(t, 30*time.Second, 250*time.Millisecond, "the provider's ServiceAccount to list the consumer's schemas", func() (bool, string) {
		r := s.RequestURL(t, token, "GET", list, "", nil)
		return r.Err == nil && r.Code == 200 && strings.Contains(r.String(), schema), r.String()
	})
	var got metav1.PartialObjectMetadata
	r = s.RequestURL(t, token, "GET", list+"/"+schema, "", nil)
	framework.RequireCode(t, r, "the provider's ServiceAccount getting the bound schema", 200)
	r.JSON(t, &got)
	framework.RequireEqual(t, got.Name, schema, "name of the schema read through the virtual workspace")
}
