package credentials

import (
	"slices"
	"testing"

	apisv1alpha2 "github.com/kcp-dev/sdk/apis/apis/v1alpha2"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
)

func export() *apisv1alpha2.APIExport {
	e := &apisv1alpha2.APIExport{ObjectMeta: metav1.ObjectMeta{Name: "core.platform-mesh.io"}}
	e.Spec.Resources = []apisv1alpha2.ResourceSchema{
		{Group: "core.platform-mesh.io", Name: "accounts"},
		{Group: "core.platform-mesh.io", Name: "accountinfos"},
	}
	e.Spec.PermissionClaims = []apisv1alpha2.PermissionClaim{
		{GroupResource: apisv1alpha2.GroupResource{Group: "", Resource: "namespaces"}, Verbs: []string{"*"}},
		{GroupResource: apisv1alpha2.GroupResource{Group: "tenancy.kcp.io", Resource: "workspaces"}, Verbs: []string{"get", "create"}},
	}
	return e
}

func has(rules []rbacv1.PolicyRule, group, resource, verb, name string) bool {
	for _, r := range rules {
		if !slices.Contains(r.APIGroups, group) || !slices.Contains(r.Resources, resource) {
			continue
		}
		if name != "" && len(r.ResourceNames) > 0 && !slices.Contains(r.ResourceNames, name) {
			continue
		}
		if slices.Contains(r.Verbs, verb) || slices.Contains(r.Verbs, "*") {
			return true
		}
	}
	return false
}

func TestClusterRoleFromExport(t *testing.T) {
	role := ClusterRole(export(), "core.platform-mesh.io")
	if role.Name != "meshplane:provider:core.platform-mesh.io" {
		t.Errorf("name = %q", role.Name)
	}
	for _, c := range []struct {
		group, resource, verb, name string
		want                        bool
	}{
		{"apis.kcp.io", "apiexports/content", "list", "core.platform-mesh.io", true},
		{"apis.kcp.io", "apiexports/content", "list", "other", false},
		{"apis.kcp.io", "apiexports", "get", "core.platform-mesh.io", true},
		{"apis.kcp.io", "apiexports", "delete", "core.platform-mesh.io", false},
		{"apis.kcp.io", "apiexportendpointslices", "watch", "core.platform-mesh.io", true},
		{"apis.kcp.io", "apiexportendpointslices", "watch", "other", false},
		// Nothing in the provider workspace itself: the exported and
		// claimed resources are reached through the virtual workspace only.
		{"apis.kcp.io", "apibindings", "list", "", false},
		{"core.platform-mesh.io", "accounts", "update", "", false},
		{"core.platform-mesh.io", "accounts/status", "patch", "", false},
		{"core.platform-mesh.io", "accountinfos", "create", "", false},
		{"", "namespaces", "delete", "", false},
		{"tenancy.kcp.io", "workspaces", "create", "", false},
		{"tenancy.kcp.io", "workspacetypes", "delete", "", false},
		{"", "secrets", "get", "", false},
	} {
		if got := has(role.Rules, c.group, c.resource, c.verb, c.name); got != c.want {
			t.Errorf("%s %s/%s (name %q): allowed=%v, want %v", c.verb, c.group, c.resource, c.name, got, c.want)
		}
	}
}

func TestKubeconfig(t *testing.T) {
	cfg := &rest.Config{Host: "https://h/clusters/root:p", BearerToken: "admin", TLSClientConfig: rest.TLSClientConfig{CAData: []byte("ca")}}
	kc, err := Kubeconfig(cfg, "https://h/services/apiexport/x/e", "")
	if err != nil {
		t.Fatal(err)
	}
	if kc.CurrentContext != "provider" || kc.Clusters["provider"].Server != "https://h/services/apiexport/x/e" ||
		string(kc.Clusters["provider"].CertificateAuthorityData) != "ca" || kc.AuthInfos["provider"].Token != "admin" {
		t.Fatalf("unexpected kubeconfig: %+v", kc)
	}
	kc, _ = Kubeconfig(cfg, "https://h/services/apiexport/x/e", "scoped")
	if kc.AuthInfos["provider"].Token != "scoped" {
		t.Fatalf("token not used: %+v", kc.AuthInfos["provider"])
	}
}
