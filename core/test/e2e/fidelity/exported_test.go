package fidelity

import (
	"testing"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// gadgetsCRD and sprocketsCRD are exported by several tests.
var (
	gadgetsCRD   = framework.SchemalessCRD("bind.example.com", "gadgets", "Gadget")
	sprocketsCRD = framework.SchemalessCRD("claims.example.com", "sprockets", "Sprocket")
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
	s.ExportCRD(t, e.provider, framework.SchemalessCRD(e.export, plural, kind), e.export)
	return e
}
