package fidelity

import (
	"fmt"
	"strings"
	"testing"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// schemalessCRD is a namespaced CRD <plural>.<group>, served and stored as
// v1, whose objects may hold anything.
func schemalessCRD(group, plural, kind string) string {
	return fmt.Sprintf(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: %[2]s.%[1]s
spec:
  group: %[1]s
  scope: Namespaced
  names: {plural: %[2]s, singular: %[4]s, kind: %[3]s, listKind: %[3]sList}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
`, group, plural, kind, strings.ToLower(kind))
}

// gadgetsCRD and sprocketsCRD are exported by several tests.
var (
	gadgetsCRD   = schemalessCRD("bind.example.com", "gadgets", "Gadget")
	sprocketsCRD = schemalessCRD("claims.example.com", "sprockets", "Sprocket")
)

// exported is an org holding a provider workspace that exports a
// schemaless CRD and a consumer workspace that has not bound it yet.
type exported struct {
	org, provider, consumer framework.Workspace
	export                  string // the APIExport's name: the CRD's group
}

// exportInNewOrg creates an org named after name with workspaces provider
// and consumer, and exports plural.<name>.example.com from provider.
func exportInNewOrg(t *testing.T, s *framework.Server, name, plural, kind string) exported {
	t.Helper()
	org := s.CreateOrg(t, name)
	ws := s.CreateWorkspaces(t, org.Path, "provider", "consumer")
	e := exported{org: org, provider: ws[0], consumer: ws[1], export: name + ".example.com"}
	s.ExportCRD(t, e.provider, schemalessCRD(e.export, plural, kind), e.export)
	return e
}
