package builtin

import (
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
)

func TestRBACDefaults(t *testing.T) {
	body := []byte(`{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRoleBinding","metadata":{"name":"b"},
"roleRef":{"kind":"ClusterRole","name":"view"},
"subjects":[{"kind":"User","name":"u"},{"kind":"Group","name":"g"},{"kind":"ServiceAccount","name":"sa","namespace":"default"}]}`)
	decoder := Codecs.UniversalDecoder(rbacv1.SchemeGroupVersion)
	obj, _, err := decoder.Decode(body, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	b := obj.(*rbacv1.ClusterRoleBinding)
	if b.RoleRef.APIGroup != rbacv1.GroupName {
		t.Errorf("roleRef.apiGroup = %q, want %q", b.RoleRef.APIGroup, rbacv1.GroupName)
	}
	for _, s := range b.Subjects {
		want := rbacv1.GroupName
		if s.Kind == rbacv1.ServiceAccountKind {
			want = ""
		}
		if s.APIGroup != want {
			t.Errorf("subject %s %s: apiGroup = %q, want %q", s.Kind, s.Name, s.APIGroup, want)
		}
	}
}
