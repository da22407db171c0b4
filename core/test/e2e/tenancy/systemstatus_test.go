package tenancy

import (
	"net/http"
	"strings"
	"testing"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// TestSystemOnlyStatus: a workspace admin (cluster-admin in his org) writes
// the status the system owns: the status subresource of APIExports and
// APIBindings is refused for every verb (kcp's system CRD authorizer), the
// status of Workspaces, WorkspaceTypes and APIExportEndpointSlices may be
// read but not written (kcp's tenancy maximal permission policy; the
// slices' endpoints are Meshplane's addition). Before the fix he could
// forge an export's identityHash or a type's virtual workspace URLs.
// kcp-admin is refused as in kcp (but for tenancy.kcp.io, which kcp's
// policy of that export grants it); system:masters is not.
func TestSystemOnlyStatus(t *testing.T) {
	tn := twoTenants(t)
	s := tn.s
	tn.s.CreateWorkspaces(t, tn.bob.Path, "team")
	k := tn.bobK
	k.RunStdin(t, `apiVersion: tenancy.kcp.io/v1alpha1
kind: WorkspaceType
metadata: {name: mytype}
spec: {initializer: true}
---
apiVersion: apis.kcp.io/v1alpha1
kind: APIExport
metadata: {name: myexport}
spec: {}
---
apiVersion: apis.kcp.io/v1alpha1
kind: APIExportEndpointSlice
metadata: {name: myslice}
spec: {export: {path: `+tn.bob.Path+`, name: myexport}}
---
apiVersion: apis.kcp.io/v1alpha2
kind: APIBinding
metadata: {name: mybinding}
spec: {reference: {export: {path: `+tn.bob.Path+`, name: myexport}}}
`, "create", "-f", "-")
	hash := s.WaitExportIdentity(t, tn.bob, "myexport")
	evil := `https://evil.example.com`
	patchStatus := func(resource, p string) []string {
		return []string{"patch", resource, "--type=merge", "--subresource=status", "-p", p}
	}
	for _, tc := range []struct {
		what string
		args []string
	}{
		{"APIExport status.identityHash", patchStatus("apiexport.apis.kcp.io/myexport", `{"status":{"identityHash":"forged"}}`)},
		{"APIBinding status.phase", patchStatus("apibinding.apis.kcp.io/mybinding", `{"status":{"phase":"Binding"}}`)},
		{"WorkspaceType status.virtualWorkspaces", patchStatus("workspacetype/mytype", `{"status":{"virtualWorkspaces":[{"url":"`+evil+`","type":"initializing"}]}}`)},
		{"APIExportEndpointSlice status.endpoints", patchStatus("apiexportendpointslice/myslice", `{"status":{"endpoints":[{"url":"`+evil+`"}]}}`)},
		{"Workspace status.phase", patchStatus("workspace/team", `{"status":{"phase":"Unavailable"}}`)},
	} {
		out, stderr, err := k.RunErr(t, tc.args...)
		framework.RequireFails(t, out, stderr, err, "bob writing "+tc.what, "status updates not permitted")
	}

	bob, kcpAdmin := s.UserToken(t, "bob"), s.KCPAdminToken(t)
	base := "/clusters/" + tn.bob.Path
	for _, tc := range []struct {
		what, token, method, path string
		want                      int
	}{
		{"bob reading an APIExport's status subresource", bob, "GET", "/apis/apis.kcp.io/v1alpha2/apiexports/myexport/status", http.StatusForbidden},
		{"bob reading an APIBinding's status subresource", bob, "GET", "/apis/apis.kcp.io/v1alpha2/apibindings/mybinding/status", http.StatusForbidden},
		{"bob reading a Workspace's status subresource", bob, "GET", "/apis/tenancy.kcp.io/v1alpha1/workspaces/team/status", http.StatusOK},
		{"bob reading a WorkspaceType's status subresource", bob, "GET", "/apis/tenancy.kcp.io/v1alpha1/workspacetypes/mytype/status", http.StatusOK},
		{"kcp-admin patching an APIExport's status", kcpAdmin, "PATCH", "/apis/apis.kcp.io/v1alpha2/apiexports/myexport/status", http.StatusForbidden},
		{"system:masters patching an APIExport's status", s.AdminToken(t), "PATCH", "/apis/apis.kcp.io/v1alpha2/apiexports/myexport/status", http.StatusOK},
		{"kcp-admin patching a Workspace's status (kcp's tenancy policy grants kcp-admin the group)", kcpAdmin, "PATCH", "/apis/tenancy.kcp.io/v1alpha1/workspaces/team/status", http.StatusOK},
		{"system:masters patching a WorkspaceType's status", s.AdminToken(t), "PATCH", "/apis/tenancy.kcp.io/v1alpha1/workspacetypes/mytype/status", http.StatusOK},
	} {
		var body []byte
		headers := map[string]string{}
		if tc.method == "PATCH" {
			body = []byte(`{"status":{}}`)
			headers["Content-Type"] = "application/merge-patch+json"
		}
		if code, out := request(t, s, tc.token, tc.method, base+tc.path, body, headers); code != tc.want {
			t.Errorf("%s: %d, want %d: %s", tc.what, code, tc.want, out)
		}
	}

	framework.RequireEqual(t, k.Run(t, "get", "apiexport.apis.kcp.io", "myexport", "-o", "jsonpath={.status.identityHash}"), hash,
		"identityHash of bob's export after the refused writes")
	for _, obj := range []string{"workspacetype/mytype", "apiexportendpointslice/myslice"} {
		if out := k.Run(t, "get", obj, "-o", "jsonpath={.status}"); strings.Contains(out, evil) {
			t.Errorf("%s after the refused writes names %s: %s", obj, evil, out)
		}
	}
}
