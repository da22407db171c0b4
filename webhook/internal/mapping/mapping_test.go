package mapping

import (
	"errors"
	"fmt"
	"reflect"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"

	"github.com/meshplane/meshplane/apis/fga"
)

func TestForResource(t *testing.T) {
	ws := Workspace{Cluster: "c1", Account: fga.AccountObject("org1", "team")}
	cm := fga.Resource{Plural: "configmaps", Singular: "configmap", Namespaced: true}
	secret := fga.Resource{Plural: "secrets", Singular: "secret", Namespaced: true}
	nsRes := fga.Resource{Plural: "namespaces", Singular: "namespace"}
	widget := fga.Resource{Group: "example.com", Plural: "widgets", Singular: "widget"}
	nsTuple := Tuple{Object: "core_namespace:c1/default", Relation: "parent", User: "core_platform-mesh_io_account:org1/team"}
	for _, c := range []struct {
		name string
		ra   authorizationv1.ResourceAttributes
		res  fga.Resource
		want Query
		none bool
	}{
		{name: "list configmaps in a namespace: on the namespace", res: cm,
			ra:   authorizationv1.ResourceAttributes{Verb: "list", Resource: "configmaps", Namespace: "default"},
			want: Query{Object: "core_namespace:c1/default", Relation: "list_core_configmaps", User: "user:bob", Contextual: []Tuple{nsTuple}}},
		{name: "create a configmap: on the namespace", res: cm,
			ra:   authorizationv1.ResourceAttributes{Verb: "create", Resource: "configmaps", Namespace: "default", Name: "x"},
			want: Query{Object: "core_namespace:c1/default", Relation: "create_core_configmaps", User: "user:bob", Contextual: []Tuple{nsTuple}}},
		{name: "get a configmap: on the object, parented to namespace and account", res: cm,
			ra: authorizationv1.ResourceAttributes{Verb: "get", Resource: "configmaps", Namespace: "default", Name: "cfg"},
			want: Query{Object: "core_configmap:c1/default/cfg", Relation: "get", User: "user:bob", Contextual: []Tuple{nsTuple,
				{Object: "core_configmap:c1/default/cfg", Relation: "parent", User: "core_namespace:c1/default"}}}},
		{name: "status subresource like the object", res: cm,
			ra: authorizationv1.ResourceAttributes{Verb: "update", Resource: "configmaps", Subresource: "status", Namespace: "default", Name: "cfg"},
			want: Query{Object: "core_configmap:c1/default/cfg", Relation: "update", User: "user:bob", Contextual: []Tuple{nsTuple,
				{Object: "core_configmap:c1/default/cfg", Relation: "parent", User: "core_namespace:c1/default"}}}},
		{name: "delete a namespace: on the namespace, parented to the account", res: nsRes,
			ra: authorizationv1.ResourceAttributes{Verb: "delete", Resource: "namespaces", Namespace: "default", Name: "default"},
			want: Query{Object: "core_namespace:c1/default", Relation: "delete", User: "user:bob", Contextual: []Tuple{
				{Object: "core_namespace:c1/default", Relation: "parent", User: "core_platform-mesh_io_account:org1/team"}}}},
		{name: "watch a cluster-scoped kind: on the account", res: widget,
			ra:   authorizationv1.ResourceAttributes{Verb: "watch", Group: "example.com", Resource: "widgets", Name: "w"},
			want: Query{Object: "core_platform-mesh_io_account:org1/team", Relation: "watch_example_com_widgets", User: "user:bob"}},
		{name: "a secret of the same name in another namespace is another object", res: secret,
			ra: authorizationv1.ResourceAttributes{Verb: "get", Resource: "secrets", Namespace: "prod", Name: "dbcreds"},
			want: Query{Object: "core_secret:c1/prod/dbcreds", Relation: "get", User: "user:bob", Contextual: []Tuple{
				{Object: "core_namespace:c1/prod", Relation: "parent", User: "core_platform-mesh_io_account:org1/team"},
				{Object: "core_secret:c1/prod/dbcreds", Relation: "parent", User: "core_namespace:c1/prod"}}}},
		{name: "a name with separators is escaped", res: fga.Resource{Group: "rbac.authorization.k8s.io", Plural: "clusterroles", Singular: "clusterrole"},
			ra: authorizationv1.ResourceAttributes{Verb: "get", Group: "rbac.authorization.k8s.io", Resource: "clusterroles", Name: "system:a.b"},
			want: Query{Object: "rbac_authorization_k8s_io_clusterrole:c1/system|3Aa.b", Relation: "get", User: "user:bob", Contextual: []Tuple{
				{Object: "rbac_authorization_k8s_io_clusterrole:c1/system|3Aa.b", Relation: "parent", User: "core_platform-mesh_io_account:org1/team"}}}},
		{name: "configmaps across namespaces", res: cm, none: true,
			ra: authorizationv1.ResourceAttributes{Verb: "list", Resource: "configmaps"}},
		{name: "deletecollection", res: cm, none: true,
			ra: authorizationv1.ResourceAttributes{Verb: "deletecollection", Resource: "configmaps", Namespace: "default"}},
		{name: "impersonate", res: cm, none: true,
			ra: authorizationv1.ResourceAttributes{Verb: "impersonate", Resource: "configmaps", Namespace: "default", Name: "x"}},
		{name: "another subresource", res: cm, none: true,
			ra: authorizationv1.ResourceAttributes{Verb: "get", Resource: "configmaps", Subresource: "proxy", Namespace: "default", Name: "x"}},
		{name: "delete without a name", res: cm, none: true,
			ra: authorizationv1.ResourceAttributes{Verb: "delete", Resource: "configmaps", Namespace: "default"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			q, err := ForResource(ws, "bob", &c.ra, c.res)
			if c.none {
				var nc NoCheck
				if !errors.As(err, &nc) {
					t.Fatalf("want NoCheck, got %+v, %v", q, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(q, c.want) {
				t.Errorf("got  %+v\nwant %+v", q, c.want)
			}
		})
	}
}

func TestForNonResource(t *testing.T) {
	ws := Workspace{Cluster: "c1", Account: "core_platform-mesh_io_account:org1/team"}
	for path, allowed := range map[string]bool{"/api": true, "/apis/apps/v1": true, "/openapi/v3": true, "/version": true,
		"/healthz": false, "/metrics": false, "/apiserver": false, "/": false, "/versions": false} {
		q, err := ForNonResource(ws, "system:serviceaccount:ns:sa", &authorizationv1.NonResourceAttributes{Path: path, Verb: "get"})
		if allowed != (err == nil) {
			t.Errorf("%s: mapped %v, want %v (%v)", path, err == nil, allowed, err)
		}
		if err == nil && (q.Object != ws.Account || q.Relation != "get" || q.User != "user:system|3Aserviceaccount|3Ans|3Asa") {
			t.Errorf("%s: got %+v", path, q)
		}
	}
}

func TestForSelfReview(t *testing.T) {
	ws := Workspace{Cluster: "c1", Account: "core_platform-mesh_io_account:org1/team"}
	q, ok := ForSelfReview(ws, "bob", &authorizationv1.ResourceAttributes{Verb: "create", Group: "authorization.k8s.io", Resource: "selfsubjectrulesreviews"})
	if !ok || q.Object != ws.Account || q.Relation != "get" || q.User != "user:bob" {
		t.Errorf("self rules review: %+v, %v", q, ok)
	}
	if _, ok := ForSelfReview(ws, "bob", &authorizationv1.ResourceAttributes{Verb: "create", Group: "authorization.k8s.io", Resource: "subjectaccessreviews"}); ok {
		t.Errorf("a SubjectAccessReview about others must not map to a self review")
	}
}

// RoleAssignments and Invites are the grant API: members read them,
// owners write them.
func TestForRoleAssignment(t *testing.T) {
	for _, res := range []string{"roleassignments", "invites"} {
		testForIAMResource(t, res)
	}
}

func testForIAMResource(t *testing.T, res string) {
	ws := Workspace{Cluster: "c1", Account: fga.AccountObject("org1", "team")}
	const group = "core.platform-mesh.io"
	for _, c := range []struct {
		ra   authorizationv1.ResourceAttributes
		want string // relation; "" for no mapping
	}{
		{authorizationv1.ResourceAttributes{Verb: "list", Group: group, Resource: res}, fga.RelationGetIAMRoles},
		{authorizationv1.ResourceAttributes{Verb: "watch", Group: group, Resource: res}, fga.RelationGetIAMRoles},
		{authorizationv1.ResourceAttributes{Verb: "get", Group: group, Resource: res, Name: "g"}, fga.RelationGetIAMRoles},
		{authorizationv1.ResourceAttributes{Verb: "create", Group: group, Resource: res, Name: "g"}, fga.RelationManageIAMRoles},
		{authorizationv1.ResourceAttributes{Verb: "update", Group: group, Resource: res, Name: "g"}, fga.RelationManageIAMRoles},
		{authorizationv1.ResourceAttributes{Verb: "patch", Group: group, Resource: res, Subresource: "status", Name: "g"}, fga.RelationManageIAMRoles},
		{authorizationv1.ResourceAttributes{Verb: "delete", Group: group, Resource: res, Name: "g"}, fga.RelationManageIAMRoles},
		{authorizationv1.ResourceAttributes{Verb: "deletecollection", Group: group, Resource: res}, ""},
		{authorizationv1.ResourceAttributes{Verb: "get", Group: group, Resource: "accounts", Name: "a"}, ""},
		{authorizationv1.ResourceAttributes{Verb: "get", Group: "example.com", Resource: res, Name: "g"}, ""},
	} {
		q, ok := ForRoleAssignment(ws, "bob", &c.ra)
		if ok != (c.want != "") || (ok && (q.Relation != c.want || q.Object != ws.Account || q.User != "user:bob" || len(q.Contextual) > 0)) {
			t.Errorf("%s %s.%s/%s: got %+v (%v), want relation %q on the account", c.ra.Verb, c.ra.Resource, c.ra.Group, c.ra.Subresource, q, ok, c.want)
		}
	}
}

func TestForLogicalCluster(t *testing.T) {
	ws := Workspace{Cluster: "c1", Account: "core_platform-mesh_io_account:org1/team"}
	q, ok := ForLogicalCluster(ws, "bob", &authorizationv1.ResourceAttributes{Verb: "get", Group: "core.kcp.io", Resource: "logicalclusters", Name: "cluster"})
	if !ok || q.Object != ws.Account || q.Relation != "get" || q.User != "user:bob" {
		t.Errorf("get of the LogicalCluster: %+v, %v", q, ok)
	}
	for _, ra := range []authorizationv1.ResourceAttributes{
		{Verb: "update", Group: "core.kcp.io", Resource: "logicalclusters", Name: "cluster"},
		{Verb: "patch", Group: "core.kcp.io", Resource: "logicalclusters", Name: "cluster", Subresource: "status"},
		{Verb: "get", Group: "core.kcp.io", Resource: "logicalclusters", Name: "cluster", Subresource: "status"},
		{Verb: "list", Group: "core.kcp.io", Resource: "logicalclusters"},
		{Verb: "get", Group: "core.kcp.io", Resource: "logicalclusters", Name: "other"},
		{Verb: "get", Group: "example.com", Resource: "logicalclusters", Name: "cluster"},
	} {
		if _, ok := ForLogicalCluster(ws, "bob", &ra); ok {
			t.Errorf("%+v must not map to the LogicalCluster read", ra)
		}
	}
}

func TestWithGroups(t *testing.T) {
	q := Query{User: "user:erin", Relation: "get", Object: "core_platform-mesh_io_account:o/a",
		Contextual: []Tuple{{Object: "core_namespace:c/apps", Relation: "parent", User: "core_platform-mesh_io_account:o/a"}}}
	got := WithGroups(q, []string{"ops", "system:authenticated", "ops", ""})
	want := []Tuple{q.Contextual[0],
		{Object: "group:ops", Relation: "member", User: "user:erin"},
		{Object: "group:system|3Aauthenticated", Relation: "member", User: "user:erin"}}
	if len(got.Contextual) != len(want) {
		t.Fatalf("WithGroups: %+v, want %+v", got.Contextual, want)
	}
	for i := range want {
		if got.Contextual[i] != want[i] {
			t.Errorf("contextual %d: %+v, want %+v", i, got.Contextual[i], want[i])
		}
	}
	if len(q.Contextual) != 1 || got.Key() == q.Key() {
		t.Errorf("WithGroups changed its input or kept its cache key: %+v", q)
	}
	many := make([]string, 200)
	for i := range many {
		many[i] = fmt.Sprintf("g%d", i)
	}
	if n := len(WithGroups(Query{User: "user:x"}, many).Contextual); n != MaxGroups {
		t.Errorf("%d groups sent, want at most %d", n, MaxGroups)
	}
}
