// Package e2e installs the core.platform-mesh.io API into a real Meshplane
// server with the real kubectl: the CRDs into a workspace, and the
// APIResourceSchemas and APIExport into a provider workspace bound by a
// consumer. The core comes from the test kit (MESHPLANE_BIN, set by `make
// test`, else bin/meshplane, else built).
package e2e

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/meshplane/meshplane/apis/config"
	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// server is a core started by the test kit, addressed by workspace path.
type server struct{ *framework.Server }

// kubectl runs kubectl as the admin against the workspace at path (e.g.
// root:orgs) and returns stdout and stderr together.
func (s server) kubectl(t *testing.T, path, stdin string, args ...string) (string, error) {
	t.Helper()
	out, errOut, err := s.KubectlFor(path).RunStdinErr(t, stdin, args...)
	return out + errOut, err
}

func (s server) mustKubectl(t *testing.T, path, stdin string, args ...string) string {
	t.Helper()
	return s.KubectlFor(path).RunStdin(t, stdin, args...)
}

// writeEmbedded copies the embedded directory dir ("crd" or "kcp") to disk,
// so that kubectl applies exactly what operators get from package config.
func writeEmbedded(t *testing.T, dir string) string {
	t.Helper()
	out := t.TempDir()
	files, err := fs.Glob(config.FS, dir+"/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no embedded files in %s: %v", dir, err)
	}
	for _, f := range files {
		data, err := config.FS.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(out, filepath.Base(f)), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

const validAccount = `apiVersion: core.platform-mesh.io/v1alpha1
kind: Account
metadata: {name: acme}
spec:
  type: org
  displayName: ACME Inc.
  creator: alice@example.com
  data: {costCenter: "1234", tags: [a, b]}
`

// checkAccounts creates a valid and two invalid Accounts in the workspace
// at path and checks what kubectl shows.
func checkAccounts(t *testing.T, s server, path string) {
	t.Helper()
	s.mustKubectl(t, path, validAccount, "create", "-f", "-")
	table := s.mustKubectl(t, path, "", "get", "accounts")
	for _, want := range []string{"TYPE", "DISPLAY NAME", "READY", "acme", "org", "ACME Inc."} {
		if !strings.Contains(table, want) {
			t.Errorf("kubectl get accounts in %s: no %q in\n%s", path, want, table)
		}
	}
	data := s.mustKubectl(t, path, "", "get", "account", "acme", "-o", "jsonpath={.spec.data.tags[1]} {.spec.creator}")
	if data != "b alice@example.com" {
		t.Errorf("stored account: spec.data.tags[1] and spec.creator = %q", data)
	}

	invalid := []struct{ spec, want string }{
		{`{type: org, displayName: ` + strings.Repeat("x", 256) + `}`, "spec.displayName: Too long"},
		{`{type: folder, displayName: F}`, `spec.type: Unsupported value: "folder"`},
		{`{type: org}`, "spec.displayName: Required value"},
	}
	for _, tt := range invalid {
		out, err := s.kubectl(t, path, "apiVersion: core.platform-mesh.io/v1alpha1\nkind: Account\nmetadata: {name: bad}\nspec: "+tt.spec+"\n", "create", "-f", "-")
		if err == nil {
			t.Errorf("creating an Account with spec %.40s... in %s succeeded, want it rejected", tt.spec, path)
			continue
		}
		if !strings.Contains(out, tt.want) {
			t.Errorf("creating an Account with spec %.40s... in %s: error %q does not contain %q", tt.spec, path, out, tt.want)
		}
	}
}

func TestInstall(t *testing.T) {
	s := server{framework.StartServer(t)}
	s.CreateWorkspaces(t, "root", "crds", "provider", "consumer")

	t.Run("CRDs in a workspace", func(t *testing.T) {
		s.mustKubectl(t, "root:crds", "", "apply", "-f", writeEmbedded(t, "crd"))
		s.mustKubectl(t, "root:crds", "", "wait", "--for=condition=Established", "--timeout=60s", "crd", "--all")
		checkAccounts(t, s, "root:crds")
	})

	t.Run("APIExport bound by a consumer", func(t *testing.T) {
		s.mustKubectl(t, "root:provider", "", "apply", "-f", writeEmbedded(t, "kcp"))
		s.mustKubectl(t, "root:consumer", `apiVersion: apis.kcp.io/v1alpha2
kind: APIBinding
metadata: {name: core.platform-mesh.io}
spec:
  reference: {export: {path: root:provider, name: core.platform-mesh.io}}
`, "apply", "-f", "-")
		s.mustKubectl(t, "root:consumer", "", "wait", "--for=condition=Ready", "--timeout=60s", "apibinding/core.platform-mesh.io")
		bound := s.mustKubectl(t, "root:consumer", "", "get", "apibinding", "core.platform-mesh.io",
			"-o", "jsonpath={range .status.boundResources[*]}{.resource} {end}")
		if bound != "accountinfos accounts authorizationmodels invites roleassignments stores " {
			t.Errorf("bound resources = %q", bound)
		}
		claims := s.mustKubectl(t, "root:consumer", "", "get", "apibinding", "core.platform-mesh.io",
			"-o", "jsonpath={range .status.exportPermissionClaims[*]}{.group}/{.resource} {end}")
		if claims != "/namespaces tenancy.kcp.io/workspaces tenancy.kcp.io/workspacetypes " {
			t.Errorf("export permission claims seen by the binding = %q", claims)
		}
		checkAccounts(t, s, "root:consumer")
		s.mustKubectl(t, "root:consumer", `apiVersion: core.platform-mesh.io/v1alpha1
kind: Store
metadata: {name: acme}
spec:
  coreModule: |
    module core
    type user
  tuples: [{object: "core_platform-mesh_io_account:x/acme", relation: owner, user: "user:alice"}]
`, "create", "-f", "-")
	})
}
