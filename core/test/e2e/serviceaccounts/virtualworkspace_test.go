package serviceaccounts

import (
	"strings"
	"testing"
	"time"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

var widgetsCRD = framework.SchemalessCRD("sa.example.com", "widgets", "Widget")

// TestTokenInAPIExportVirtualWorkspace checks that a provider's
// ServiceAccount token works in the APIExport virtual workspace of its
// own workspace's export (RBAC there decides), and not in the consumer
// workspace itself.
func TestTokenInAPIExportVirtualWorkspace(t *testing.T) {
	s := server(t)
	org := s.CreateOrg(t, "sa-vw")
	wss := s.CreateWorkspaces(t, org.Path, "provider", "consumer")
	provider, consumer := wss[0], wss[1]
	s.ExportCRD(t, provider, widgetsCRD, "sa.example.com")
	s.Bind(t, consumer, "widgets", provider, "sa.example.com", nil)
	url := s.EndpointSliceURL(t, provider, "sa.example.com")

	p := s.KubectlFor(provider.Path)
	p.Run(t, "create", "namespace", "ops")
	p.Run(t, "create", "serviceaccount", "controller", "-n", "ops")
	token := strings.TrimSpace(p.Run(t, "create", "token", "controller", "-n", "ops"))
	list := url + "/clusters/*/apis/sa.example.com/v1/widgets"

	// Authenticated, but without verb content on the export: 403.
	r := s.RequestURL(t, token, "GET", list, "", nil)
	framework.RequireCode(t, r, "the provider's ServiceAccount listing widgets in the virtual workspace before any grant", 403)

	p.RunStdin(t, `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: widgets-content
rules:
- apiGroups: ["apis.kcp.io"]
  resources: ["apiexports/content"]
  resourceNames: ["sa.example.com"]
  verbs: ["*"]
`, "apply", "-f", "-")
	p.Run(t, "create", "clusterrolebinding", "controller-content", "--clusterrole=widgets-content", "--serviceaccount=ops:controller")
	framework.Eventually(t, 30*time.Second, 250*time.Millisecond, "the provider's ServiceAccount to list widgets in the virtual workspace", func() (bool, string) {
		r := s.RequestURL(t, token, "GET", list, "", nil)
		return r.Err == nil && r.Code == 200, r.String()
	})

	// The consumer workspace itself is another cluster: 401.
	requireUnauthorized(t, tokenKubectl(t, s, consumer.Path, token), "the provider's token in the consumer workspace", "get", "widgets", "-n", "default")
	r = s.RequestURL(t, token, "GET", s.ClusterURL(consumer.Path)+"/apis/sa.example.com/v1/widgets", "", nil)
	framework.RequireCode(t, r, "the provider's token on the consumer workspace's URL", 401)
}
