package apis

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// apisServicesSchema is a Service of the core group as kcp's fixtures
// export it (an APIResourceSchema made from kube's CRD of services).
const apisServicesSchema = `apiVersion: apis.kcp.io/v1alpha1
kind: APIResourceSchema
metadata:
  name: v1.services.core
spec:
  group: ""
  names: {plural: services, singular: service, kind: Service, listKind: ServiceList, shortNames: [svc]}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      type: object
      properties:
        spec: {type: object, x-kubernetes-preserve-unknown-fields: true}
        status: {type: object, x-kubernetes-preserve-unknown-fields: true}
---
apiVersion: apis.kcp.io/v1alpha2
kind: APIExport
metadata:
  name: services
spec:
  resources:
  - {group: "", name: services, schema: v1.services.core, storage: {crd: {}}}
`

// TestBoundBuiltinKind checks kcp's TestKubeQuotaCoreV1TypesFromBinding:
// services, which a workspace does not serve, are exported in the core
// group and bound; the consumer then serves them (discovery included),
// ResourceQuota counts and limits them, the provider lists them through
// its virtual workspace, and they go with the binding. The built-in
// configmaps of the core group are served as before.
func TestBoundBuiltinKind(t *testing.T) {
	t.Parallel()
	s := server(t)
	org := s.CreateOrg(t, "e2e-builtin")
	ws := s.CreateWorkspaces(t, org.Path, "provider", "consumer")
	provider, consumer := ws[0], ws[1]
	services := "/clusters/" + consumer.Path + "/api/v1/namespaces/default/services"
	framework.RequireCode(t, s.AdminRequest(t, "GET", services, nil), "listing services before the binding", 404)

	s.KubectlFor(provider.Path).RunStdin(t, apisServicesSchema, "apply", "-f", "-")
	identity := s.WaitExportIdentity(t, provider, "services")
	s.Bind(t, consumer, "services", provider, "services", nil)

	framework.Eventually(t, 30*time.Second, 250*time.Millisecond, "services to be served in the consumer", func() (bool, string) {
		r := s.AdminRequest(t, "GET", services, nil)
		return r.Code == 200, r.String()
	})
	// Discovery: /api/v1 and the aggregated core group list services beside the built-in kinds.
	var list struct {
		Resources []struct{ Name, Kind string } `json:"resources"`
	}
	s.AdminRequest(t, "GET", "/clusters/"+consumer.Path+"/api/v1", nil).JSON(t, &list)
	var names []string
	for _, r := range list.Resources {
		names = append(names, r.Name)
	}
	for _, want := range []string{"services", "services/status", "configmaps", "namespaces"} {
		if !strings.Contains(","+strings.Join(names, ",")+",", ","+want+",") {
			t.Errorf("/api/v1 of the consumer does not list %s: %v", want, names)
		}
	}
	k := s.KubectlFor(consumer.Path)
	framework.RequireContains(t, k.Run(t, "api-resources", "--api-group="), "services", "kubectl api-resources of the core group")
	// OpenAPI v3: services join api/v1 (no group "" under /apis).
	if r := s.AdminRequest(t, "GET", "/clusters/"+consumer.Path+"/openapi/v3", nil); r.Code != 200 || strings.Contains(string(r.Body), `"apis//`) {
		t.Errorf("OpenAPI v3 index of the consumer: %s", r)
	}
	framework.RequireContains(t, k.Run(t, "explain", "services"), "KIND:       Service", "kubectl explain services")
	framework.RequireContains(t, k.Run(t, "explain", "configmaps.data"), "FIELD: data", "kubectl explain configmaps.data")

	k.RunStdin(t, `apiVersion: v1
kind: ResourceQuota
metadata: {name: quota, namespace: default}
spec: {hard: {count/services: "1"}}
`, "create", "-f", "-")
	framework.Eventually(t, 30*time.Second, 250*time.Millisecond, "the quota to count 0 services", func() (bool, string) {
		got := k.Run(t, "get", "resourcequota", "quota", "-n", "default", "-o", `jsonpath={.status.used.count/services}`)
		return got == "0", got
	})
	svc := func(name string) string {
		return "apiVersion: v1\nkind: Service\nmetadata: {name: " + name + ", namespace: default}\nspec: {ports: [{port: 80}]}\n"
	}
	k.RunStdin(t, svc("first"), "create", "-f", "-")
	out, stderr, err := k.RunStdinErr(t, svc("second"), "create", "-f", "-")
	framework.RequireFails(t, out, stderr, err, "a second service beyond the quota", "exceeded quota: quota")
	framework.RequireEqual(t, k.Run(t, "get", "services", "-n", "default", "-o", "jsonpath={.items[*].metadata.name}"), "first", "services of the consumer")
	// The configmaps of the core group are still the built-in ones.
	k.Run(t, "create", "configmap", "plain", "-n", "default")
	framework.RequireEqual(t, k.Run(t, "get", "configmap", "plain", "-n", "default", "-o", "jsonpath={.metadata.name}"), "plain", "a configmap of the consumer")

	// The provider lists the consumers' services through its virtual workspace.
	vw := "/services/apiexport/" + provider.Cluster + "/services/clusters/*/api/v1/services"
	var items struct {
		Items []struct {
			Metadata struct {
				Name        string            `json:"name"`
				Annotations map[string]string `json:"annotations"`
			} `json:"metadata"`
		} `json:"items"`
	}
	r := s.AdminRequest(t, "GET", vw, nil)
	framework.RequireCode(t, r, "the provider listing services through its virtual workspace", 200)
	if err := json.Unmarshal(r.Body, &items); err != nil || len(items.Items) != 1 || items.Items[0].Metadata.Name != "first" ||
		items.Items[0].Metadata.Annotations[framework.ClusterAnnotation] != consumer.Cluster {
		t.Errorf("services through the virtual workspace: %s", r.Body)
	}
	wildcard := "/clusters/*/api/v1/services:" + identity
	framework.RequireCode(t, s.AdminRequest(t, "GET", wildcard, nil), "listing the bound services by identity on the wildcard", 200)

	k.Run(t, "delete", "apibinding", "services")
	framework.Eventually(t, 60*time.Second, 250*time.Millisecond, "services to go with the binding", func() (bool, string) {
		r := s.AdminRequest(t, "GET", services, nil)
		return r.Code == 404, r.String()
	})
}

// TestBoundBuiltinKindIsNoBackdoor: a provider that exports secrets of the
// core group, which the server serves itself, gets no way into a
// consumer's Secrets when the consumer binds the export: the consumer's
// secrets stay the built-in ones, and the provider's virtual workspace
// refuses them (403), as it refuses any resource the consumer does not
// serve under the export's identity.
func TestBoundBuiltinKindIsNoBackdoor(t *testing.T) {
	t.Parallel()
	s := server(t)
	org := s.CreateOrg(t, "e2e-backdoor")
	ws := s.CreateWorkspaces(t, org.Path, "provider", "consumer")
	provider, consumer := ws[0], ws[1]
	s.KubectlFor(provider.Path).RunStdin(t, `apiVersion: apis.kcp.io/v1alpha1
kind: APIResourceSchema
metadata: {name: v1.secrets.core}
spec:
  group: ""
  names: {plural: secrets, singular: secret, kind: Secret, listKind: SecretList}
  scope: Namespaced
  versions:
  - {name: v1, served: true, storage: true, schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
---
apiVersion: apis.kcp.io/v1alpha2
kind: APIExport
metadata: {name: secrets}
spec:
  resources:
  - {group: "", name: secrets, schema: v1.secrets.core, storage: {crd: {}}}
`, "apply", "-f", "-")
	s.WaitExportIdentity(t, provider, "secrets")
	s.Bind(t, consumer, "secrets", provider, "secrets", nil)
	k := s.KubectlFor(consumer.Path)
	k.Run(t, "create", "secret", "generic", "private", "-n", "default", "--from-literal=password=hunter2")
	framework.RequireEqual(t, k.Run(t, "get", "secret", "private", "-n", "default", "-o", "jsonpath={.data.password}"), "aHVudGVyMg==",
		"the consumer's own secret")

	base := "/services/apiexport/" + provider.Cluster + "/secrets/clusters/" + consumer.Cluster + "/api/v1/namespaces/default/secrets"
	for _, path := range []string{base, base + "/private"} {
		r := s.AdminRequest(t, "GET", path, nil)
		framework.RequireCode(t, r, "the provider reading the consumer's secrets through its virtual workspace", 403)
		if strings.Contains(string(r.Body), "aHVudGVyMg==") {
			t.Errorf("the provider read the consumer's secret: %s", r.Body)
		}
	}
	r := s.AdminRequest(t, "POST", base, []byte(`{"apiVersion":"v1","kind":"Secret","metadata":{"name":"planted"}}`))
	framework.RequireCode(t, r, "the provider creating a secret in the consumer through its virtual workspace", 403)
}
