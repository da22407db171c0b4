package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// gizmoCRD is exported twice: the second time with {{FIELD}} added.
const gizmoCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gizmos.evolve.example.dev
spec:
  group: evolve.example.dev
  scope: Namespaced
  names: {plural: gizmos, singular: gizmo, kind: Gizmo, listKind: GizmoList}
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
            properties:
              size: {type: integer}{{FIELD}}
`

// TestExportSchemaChange changes the schema of an APIExport under an
// existing binding (a new APIResourceSchema with one more field, the
// export pointed at it): the consumer's GraphQL schema shows the new field
// within seconds. The gateway of this package re-checks on a timer only
// every 5 minutes, so only its change events can explain that.
func TestExportSchemaChange(t *testing.T) {
	t.Parallel()
	s := framework.SharedServer(t)
	provider := s.CreateOrg(t, "gql-evolve-provider")
	s.ExportCRD(t, provider, strings.Replace(gizmoCRD, "{{FIELD}}", "", 1), "evolve.example.dev")
	consumer := userWorkspace(t, s, "gql-evolve-consumer", "alice")
	s.Bind(t, consumer, "gizmos", provider, "evolve.example.dev", nil)
	c := newClient(t, consumer.Path, s.UserToken(t, "alice"))

	specFields := func() string {
		d := c.must(t, `{ __type(name: "GizmoSpec") { fields { name } } }`, nil)
		return fmt.Sprint(at(d, "__type", "fields"))
	}
	framework.Eventually(t, 30*time.Second, 200*time.Millisecond, "the bound Gizmo in the schema", func() (bool, string) {
		f := specFields()
		return strings.Contains(f, "size"), f
	})
	if f := specFields(); strings.Contains(f, "color") {
		t.Fatalf("GizmoSpec has color before the export changed: %s", f)
	}
	c.must(t, `mutation { evolve_example_dev { v1 { createGizmo(namespace: "default", object: {metadata: {name: "g1"}, spec: {size: 1}}) { metadata { name } } } } }`, nil)

	s.ExportCRD(t, provider, strings.Replace(gizmoCRD, "{{FIELD}}", "\n              color: {type: string}", 1), "evolve.example.dev")
	changed := time.Now()
	framework.Eventually(t, 30*time.Second, 200*time.Millisecond, "the export's new field in the consumer's schema", func() (bool, string) {
		f := specFields()
		return strings.Contains(f, "color"), f
	})
	t.Logf("the new field appeared in the consumer's schema %v after the export changed", time.Since(changed).Round(10*time.Millisecond))
	d := c.must(t, `mutation { evolve_example_dev { v1 { updateGizmo(name: "g1", namespace: "default", object: {spec: {color: "red"}}) { spec { size color } } } } }`, nil)
	framework.RequireEqual(t, fmt.Sprint(at(d, "evolve_example_dev", "v1", "updateGizmo", "spec")), "map[color:red size:1]", "the object with the new field")
}
