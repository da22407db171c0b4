package fidelity

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// TestRBACDefaults creates bindings the way clients written against kcp
// send them, with an empty roleRef.apiGroup and subjects without apiGroup,
// and checks they are defaulted as kube-apiserver defaults them.
func TestRBACDefaults(t *testing.T) {
	t.Parallel()
	s := server(t)
	org := s.CreateOrg(t, "rbacdefaults")
	for _, obj := range []struct{ path, body string }{
		{"/clusters/" + org.Path + "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
			`{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRoleBinding","metadata":{"name":"viewers"},
"roleRef":{"apiGroup":"","kind":"ClusterRole","name":"view"},
"subjects":[{"kind":"User","name":"alice"},{"kind":"Group","name":"devs"},{"kind":"ServiceAccount","name":"sa","namespace":"default"}]}`},
		{"/clusters/" + org.Path + "/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings",
			`{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"RoleBinding","metadata":{"name":"viewers"},
"roleRef":{"kind":"ClusterRole","name":"view"},"subjects":[{"kind":"User","name":"alice"}]}`},
	} {
		r := s.AdminRequest(t, http.MethodPost, obj.path, []byte(obj.body))
		if r.Code != http.StatusCreated {
			t.Fatalf("creating a binding with an empty roleRef.apiGroup: %s", r)
		}
		var got struct {
			RoleRef  struct{ APIGroup string } `json:"roleRef"`
			Subjects []struct{ Kind, APIGroup string }
		}
		if err := json.Unmarshal(r.Body, &got); err != nil {
			t.Fatal(err)
		}
		framework.RequireEqual(t, got.RoleRef.APIGroup, "rbac.authorization.k8s.io", "roleRef.apiGroup of "+obj.path)
		for _, sub := range got.Subjects {
			want := "rbac.authorization.k8s.io"
			if sub.Kind == "ServiceAccount" {
				want = ""
			}
			framework.RequireEqual(t, sub.APIGroup, want, "apiGroup of a "+sub.Kind+" subject of "+obj.path)
		}
	}
}

// TestBadResourceVersion checks a resourceVersion that is no number is a
// 400 Status on lists and watches, in a cluster and across all clusters
// (kcp answers watches with a 500).
func TestBadResourceVersion(t *testing.T) {
	t.Parallel()
	s := server(t)
	for _, path := range []string{
		"/clusters/root/api/v1/configmaps?resourceVersion=abc",
		"/clusters/root/api/v1/configmaps?watch=true&resourceVersion=abc",
		"/clusters/root/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=-1",
		"/clusters/root/apis/tenancy.kcp.io/v1alpha1/workspaces?watch=true&resourceVersion=abc",
		"/clusters/root/apis/apiextensions.k8s.io/v1/customresourcedefinitions?watch=true&resourceVersion=abc",
		"/clusters/*/api/v1/configmaps?resourceVersion=abc",
		"/clusters/*/api/v1/configmaps?watch=true&resourceVersion=abc",
	} {
		r := s.AdminRequest(t, http.MethodGet, path, nil)
		if st := r.Status(t); r.Code != http.StatusBadRequest || st.Reason != "BadRequest" {
			t.Errorf("GET %s: want a 400 BadRequest Status, got %s", path, r)
		}
	}
}
