package fidelity

import (
	"testing"
	"time"

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
