package fidelity

import (
	"encoding/json"
	"io"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// appsCRD installs Kubernetes' Deployment kind as a CRD in group apps,
// which has no dot.
const appsCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: deployments.apps
spec:
  group: apps
  scope: Namespaced
  names: {plural: deployments, singular: deployment, kind: Deployment, listKind: DeploymentList, shortNames: [deploy]}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            x-kubernetes-preserve-unknown-fields: true
`

const appsDeployment = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec: {replicas: 2}
`

// TestCRDGroupWithoutDot installs a CRD whose group has no dot (apps), as
// kcp allows so that kube kinds can be served from CRDs, and uses it.
func TestCRDGroupWithoutDot(t *testing.T) {
	t.Parallel()
	s := server(t)
	org := s.CreateOrg(t, "dotless")
	ws := s.CreateWorkspaces(t, org.Path, "w")[0]
	k := s.KubectlFor(ws.Path)
	k.RunStdin(t, appsCRD, "apply", "-f", "-")
	k.WaitForCRD(t, "deployments.apps", "deployments.apps", "default")
	k.RunStdin(t, appsDeployment, "apply", "-f", "-")
	got := k.Run(t, "get", "deploy", "web", "-n", "default", "-o", "jsonpath={.apiVersion} {.spec.replicas}")
	framework.RequireEqual(t, got, "apps/v1 2", "the Deployment read back")
	// Other validation still applies to such groups.
	out, stderr, err := k.RunStdinErr(t, `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: things.Bad_Group}
spec:
  group: Bad_Group
  scope: Namespaced
  names: {plural: things, singular: thing, kind: Thing}
  versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}]
`, "apply", "-f", "-")
	framework.RequireFails(t, out, stderr, err, "a CRD with an invalid group", "spec.group")
}

// TestReservedCRDGroups checks that a CRD in one of kcp's API groups is
// refused with kcp's message, even for system:masters, while other groups of
// the kcp.io domain (kcp's own mount fixtures use contrib.kcp.io) stay
// open.
func TestReservedCRDGroups(t *testing.T) {
	t.Parallel()
	s := server(t)
	org := s.CreateOrg(t, "crdgroups")
	ws := s.CreateWorkspaces(t, org.Path, "w")[0]
	crd := func(group string) string { return framework.SchemalessCRD(group, "cowboys", "Cowboy") }
	k := s.KubectlFor(ws.Path) // system:masters
	for _, group := range []string{"apis.kcp.io", "tenancy.kcp.io", "core.kcp.io", "topology.kcp.io", "cache.kcp.io", "extra.apis.kcp.io"} {
		out, stderr, err := k.RunStdinErr(t, crd(group), "create", "-f", "-")
		framework.RequireFails(t, out, stderr, err, "a CRD in group "+group,
			`customresourcedefinitions.apiextensions.k8s.io "cowboys.`+group+`" is forbidden: `+group+` is a reserved group`)
	}
	k.RunStdin(t, crd("contrib.kcp.io"), "create", "-f", "-")
	framework.Eventually(t, 30*time.Second, 250*time.Millisecond, "cowboys.contrib.kcp.io to be served", func() (bool, string) {
		_, stderr, err := k.RunErr(t, "get", "cowboys.contrib.kcp.io", "-A")
		return err == nil, stderr
	})
}

// TestWildcardListOfCRDs checks kcp's conformance test: across all logical
// clusters, a resource of CRDs (no identity; their schemas may differ) is
// not served as a whole (404), but a PartialObjectMetadata list works and
// shows the objects of every cluster.
func TestWildcardListOfCRDs(t *testing.T) {
	t.Parallel()
	s := server(t)
	org := s.CreateOrg(t, "wildcrd")
	ws := s.CreateWorkspaces(t, org.Path, "w1", "w2")
	group := org.Cluster + ".example.com" // unique to this test
	for _, w := range ws {
		k := s.KubectlFor(w.Path)
		k.RunStdin(t, framework.SchemalessCRD(group, "things", "Thing"), "create", "-f", "-")
		framework.Eventually(t, 30*time.Second, 250*time.Millisecond, "things to be served in "+w.Path, func() (bool, string) {
			_, stderr, err := k.RunStdinErr(t, "apiVersion: "+group+"/v1\nkind: Thing\nmetadata: {name: thing-"+w.Name+", namespace: default}\n", "create", "-f", "-")
			return err == nil, stderr
		})
	}
	path := "/clusters/*/apis/" + group + "/v1/things"
	framework.RequireCode(t, s.AdminRequest(t, "GET", path, nil), "a wildcard list of the CRDs' resource", 404)
	req, err := http.NewRequestWithContext(framework.CallContext(t), "GET", s.BaseURL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1")
	req.Header.Set("Authorization", "Bearer "+s.AdminToken(t))
	resp, err := s.HTTPClient(t).Do(req)
	if err != nil {
		t.Fatalf("a wildcard PartialObjectMetadata list: %v", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("a wildcard PartialObjectMetadata list of the CRDs' resource: %d %s", resp.StatusCode, body)
	}
	var list metav1.PartialObjectMetadataList
	if err := json.Unmarshal(body, &list); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, it := range list.Items {
		got = append(got, it.Name)
	}
	sort.Strings(got)
	framework.RequireEqual(t, strings.Join(got, ","), "thing-w1,thing-w2", "things listed across clusters")
	framework.RequireEqual(t, list.Kind, "PartialObjectMetadataList", "the list's kind")
}
