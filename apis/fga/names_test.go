package fga

import (
	"strings"
	"testing"

	"github.com/openfga/language/pkg/go/validation"

	"github.com/meshplane/meshplane/apis/core/v1alpha1"
)

func TestTypeName(t *testing.T) {
	long := "very.long.group.name.example.platform-mesh.io"
	tests := []struct {
		group, singular, want string
	}{
		{"", "configmap", "core_configmap"},
		{"", "Namespace", "core_namespace"},
		{"core.platform-mesh.io", "account", AccountType},
		{"apis.kcp.io", "apibinding", "apis_kcp_io_apibinding"},
		{"rbac.authorization.k8s.io", "clusterrole", "rbac_authorization_k8s_io_clusterrole"},
		// 50 characters stay as they are.
		{"abcdefghij.abcdefghij.abcdefghij.abcdefghijk", "thing", "abcdefghij_abcdefghij_abcdefghij_abcdefghijk_thing"},
		{long, "mongodbcommunity", Shorten("very_long_group_name_example_platform-mesh_io_mongodbcommunity")},
	}
	for _, tt := range tests {
		got := TypeName(tt.group, tt.singular)
		if got != tt.want {
			t.Errorf("TypeName(%q, %q) = %q, want %q", tt.group, tt.singular, got, tt.want)
		}
		if len(got) > MaxNameLength {
			t.Errorf("TypeName(%q, %q) = %q has %d characters, more than %d", tt.group, tt.singular, got, len(got), MaxNameLength)
		}
		if !validation.ValidateType(got) {
			t.Errorf("TypeName(%q, %q) = %q is not a valid OpenFGA type", tt.group, tt.singular, got)
		}
	}
}

func TestShorten(t *testing.T) {
	a := Shorten("create_" + strings.Repeat("x", 60) + "_widgets")
	b := Shorten("create_" + strings.Repeat("x", 60) + "_gadgets")
	if len(a) != MaxNameLength || len(b) != MaxNameLength {
		t.Fatalf("shortened names have %d and %d characters, want %d", len(a), len(b), MaxNameLength)
	}
	if a == b {
		t.Fatalf("two long names that differ at the end shorten to the same %q", a)
	}
	if !strings.HasPrefix(a, "create_xxx") {
		t.Fatalf("shortened name %q lost its start", a)
	}
	if again := Shorten("create_" + strings.Repeat("x", 60) + "_widgets"); again != a {
		t.Fatalf("Shorten is not deterministic: %q then %q", a, again)
	}
	if Shorten("short") != "short" {
		t.Fatal("a short name changed")
	}
}

func TestRelationName(t *testing.T) {
	tests := []struct {
		verb, group, plural, want string
	}{
		{"create", "", "configmaps", "create_core_configmaps"},
		{"list", "core.platform-mesh.io", "accounts", "list_core_platform-mesh_io_accounts"},
		{"watch", "mongodb.example.io", "mongodbcommunities", "watch_mongodb_example_io_mongodbcommunities"},
	}
	for _, tt := range tests {
		if got := RelationName(tt.verb, tt.group, tt.plural); got != tt.want {
			t.Errorf("RelationName(%q, %q, %q) = %q, want %q", tt.verb, tt.group, tt.plural, got, tt.want)
		}
	}
	long := RelationName("create", "admissionregistration.k8s.io", "validatingadmissionpolicybindings")
	if len(long) > MaxNameLength || !validation.ValidateRelation(long) {
		t.Fatalf("relation %q is not a valid OpenFGA relation of at most %d characters", long, MaxNameLength)
	}
}

func TestAccountTuples(t *testing.T) {
	org := AccountTuples("orgs1", "acme", "alice", "", "")
	want := []v1alpha1.Tuple{
		{Object: "role:core_platform-mesh_io_account/orgs1/acme/owner", Relation: "assignee", User: "user:alice"},
		{Object: "core_platform-mesh_io_account:orgs1/acme", Relation: "owner", User: "role:core_platform-mesh_io_account/orgs1/acme/owner#assignee"},
	}
	if len(org) != len(want) {
		t.Fatalf("org tuples = %v, want %v", org, want)
	}
	for i := range want {
		if org[i] != want[i] {
			t.Errorf("org tuple %d = %v, want %v", i, org[i], want[i])
		}
	}
	acc := AccountTuples("acmec1", "team", "bob", "orgs1", "acme")
	parent := v1alpha1.Tuple{Object: "core_platform-mesh_io_account:acmec1/team", Relation: "parent", User: "core_platform-mesh_io_account:orgs1/acme"}
	if len(acc) != 3 || acc[2] != parent {
		t.Fatalf("account tuples = %v, want the owner tuples and %v", acc, parent)
	}
	for _, tu := range append(org, acc...) {
		if !validation.ValidateObject(tu.Object) || !validation.ValidateRelation(tu.Relation) || !validation.ValidateUser(tu.User) {
			t.Errorf("tuple %v is not valid for OpenFGA", tu)
		}
	}
}
