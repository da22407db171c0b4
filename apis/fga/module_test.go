package fga

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	openfgav1 "github.com/openfga/api/proto/openfga/v1"
	"google.golang.org/protobuf/encoding/protojson"
)

func typeDef(t *testing.T, m *openfgav1.AuthorizationModel, name string) *openfgav1.TypeDefinition {
	t.Helper()
	for _, td := range m.GetTypeDefinitions() {
		if td.GetType() == name {
			return td
		}
	}
	t.Fatalf("model has no type %s", name)
	return nil
}

func hasRelations(t *testing.T, td *openfgav1.TypeDefinition, rels ...string) {
	t.Helper()
	for _, r := range rels {
		if _, ok := td.GetRelations()[r]; !ok {
			t.Errorf("type %s has no relation %s", td.GetType(), r)
		}
	}
}

func TestCoreModuleParses(t *testing.T) {
	model, err := Compose([]Module{{Name: CoreModuleName, Contents: CoreModule}})
	if err != nil {
		t.Fatalf("core module does not compose: %v\n%s", err, CoreModule)
	}
	if model.GetSchemaVersion() != SchemaVersion {
		t.Fatalf("schema %q, want %q", model.GetSchemaVersion(), SchemaVersion)
	}
	typeDef(t, model, UserType)
	hasRelations(t, typeDef(t, model, RoleType), RelationAssignee)
	hasRelations(t, typeDef(t, model, AccountType), "parent", "owner", "member", "get", "update", "delete", "patch", "watch",
		"manage_iam_roles", "get_iam_roles", "get_iam_users",
		"create_core_platform-mesh_io_accounts", "list_core_platform-mesh_io_accounts", "watch_core_platform-mesh_io_accounts",
		"create_core_namespaces", "list_core_namespaces", "watch_core_namespaces",
		"create_apis_kcp_io_apibindings", "list_rbac_authorization_k8s_io_clusterroles")
	hasRelations(t, typeDef(t, model, NamespaceType), "parent", "owner", "member", "get", "update", "delete", "patch", "watch",
		"create_core_configmaps", "list_core_configmaps", "watch_core_configmaps",
		"create_core_secrets", "list_rbac_authorization_k8s_io_roles")
	for _, r := range BuiltinResources {
		td := typeDef(t, model, r.Type())
		hasRelations(t, td, "parent", "owner", "member", "get", "update", "delete", "patch", "watch",
			"manage_iam_roles", "get_iam_roles", "get_iam_users")
	}
	if len(model.GetTypeDefinitions()) != 4+len(BuiltinResources) {
		t.Fatalf("core model has %d types, want user, role, group, account and %d built-in kinds", len(model.GetTypeDefinitions()), len(BuiltinResources))
	}
}

// The relations of the contract, as the webhook's checks use them: the
// parent of a configmap is its namespace, whose parent is the account.
func TestCoreModuleRelations(t *testing.T) {
	model, err := Compose([]Module{{Name: CoreModuleName, Contents: CoreModule}})
	if err != nil {
		t.Fatal(err)
	}
	cm := typeDef(t, model, "core_configmap")
	parent := cm.GetMetadata().GetRelations()["parent"].GetDirectlyRelatedUserTypes()
	if len(parent) != 1 || parent[0].GetType() != NamespaceType {
		t.Fatalf("core_configmap's parent is %v, want core_namespace", parent)
	}
	nsParent := typeDef(t, model, NamespaceType).GetMetadata().GetRelations()["parent"].GetDirectlyRelatedUserTypes()
	if len(nsParent) != 1 || nsParent[0].GetType() != AccountType {
		t.Fatalf("core_namespace's parent is %v, want %s", nsParent, AccountType)
	}
	owner := typeDef(t, model, AccountType).GetMetadata().GetRelations()["owner"].GetDirectlyRelatedUserTypes()
	var got []string
	for _, u := range owner {
		got = append(got, u.GetType()+"#"+u.GetRelation())
	}
	if strings.Join(got, ",") != "user#,role#assignee,group#member" {
		t.Fatalf("account owner may be %v, want user, role#assignee and group#member", got)
	}
	// Other kinds take no group subjects (grants to groups are on accounts).
	cmOwner := cm.GetMetadata().GetRelations()["owner"].GetDirectlyRelatedUserTypes()
	if len(cmOwner) != 2 {
		t.Fatalf("core_configmap owner may be %v, want user and role#assignee", cmOwner)
	}
}

func TestResourceModule(t *testing.T) {
	widget := Resource{Group: "example.com", Plural: "widgets", Singular: "widget", Namespaced: true}
	cluster := Resource{Group: "mongodb.example.io", Plural: "clusters", Singular: "cluster"}
	model, err := Compose([]Module{
		{Name: CoreModuleName, Contents: CoreModule},
		{Name: widget.ModuleName(), Contents: ResourceModule(widget)},
		{Name: cluster.ModuleName(), Contents: ResourceModule(cluster)},
	})
	if err != nil {
		t.Fatalf("generated modules do not compose: %v\n%s", err, ResourceModule(widget))
	}
	hasRelations(t, typeDef(t, model, NamespaceType), "create_example_com_widgets", "list_example_com_widgets", "watch_example_com_widgets")
	hasRelations(t, typeDef(t, model, "example_com_widget"), "parent", "owner", "member", "get", "update", "delete", "patch", "watch")
	hasRelations(t, typeDef(t, model, AccountType), "create_mongodb_example_io_clusters", "list_mongodb_example_io_clusters")
	hasRelations(t, typeDef(t, model, "mongodb_example_io_cluster"), "parent", "member", "owner", "get")
	for _, typ := range []string{"example_com_widget", "mongodb_example_io_cluster"} {
		wantGrants(t, model, typ, objectGrants)
	}
}

func TestResourceValidate(t *testing.T) {
	if err := (Resource{Group: "a.io", Plural: "things", Singular: "thing"}).Validate(); err != nil {
		t.Fatalf("a plain resource is refused: %v", err)
	}
	for _, r := range []Resource{{Group: "a.io", Plural: "things"}, {Group: "a#b", Plural: "x", Singular: "y"}} {
		if err := r.Validate(); err == nil {
			t.Errorf("resource %+v was accepted", r)
		}
	}
}

func manyResources(n int) []Module {
	var mods []Module
	for i := 0; i < n; i++ {
		r := Resource{Group: fmt.Sprintf("provider%03d.example.io", i), Plural: "widgets", Singular: "widget", Namespaced: i%2 == 0}
		mods = append(mods, Module{Name: r.ModuleName(), Contents: ResourceModule(r)})
	}
	return mods
}

// 200 bound resource types give one model with more than OpenFGA's default
// 100 types; the size is what the server's limit must allow.
func TestTwoHundredResources(t *testing.T) {
	model, rejected, err := ComposeSkipping(Module{Name: CoreModuleName, Contents: CoreModule}, manyResources(200))
	if err != nil || len(rejected) != 0 {
		t.Fatalf("composing 200 modules: %v, rejected %v", err, rejected)
	}
	want := 4 + len(BuiltinResources) + 200
	if len(model.GetTypeDefinitions()) != want {
		t.Fatalf("model has %d types, want %d", len(model.GetTypeDefinitions()), want)
	}
	raw, err := protojson.Marshal(model)
	if err != nil {
		t.Fatal(err)
	}
	file := regexp.MustCompile(`^[a-zA-Z0-9_\-\/]{1,100}\.fga$`)
	for _, td := range model.GetTypeDefinitions() {
		if f := td.GetMetadata().GetSourceInfo().GetFile(); !file.MatchString(f) {
			t.Fatalf("type %s has source file %q, which OpenFGA refuses", td.GetType(), f)
		}
	}
	t.Logf("200 bound resources: %d types, %d bytes of JSON", want, len(raw))
	if len(raw) > MaxModelSizeBytes {
		t.Fatalf("model is %d bytes, more than the %d the platform configures", len(raw), MaxModelSizeBytes)
	}
	if want > MaxTypesPerModel {
		t.Fatalf("model has %d types, more than the %d the platform configures", want, MaxTypesPerModel)
	}
}

func TestComposeSkipping(t *testing.T) {
	widget := Resource{Group: "example.com", Plural: "widgets", Singular: "widget", Namespaced: true}
	dupType := "module dup\n\ntype example_com_widget\n  relations\n    define owner: [user]\n"
	dupRelation := "module duprel\n\nextend type core_namespace\n  relations\n    define create_core_configmaps: owner\n"
	undefined := "module undefined\n\nextend type nowhere\n  relations\n    define x: [user]\n"
	broken := "module broken\n\ntype\n"
	gadget := Resource{Group: "example.com", Plural: "gadgets", Singular: "gadget"}
	// Extends a type that only the dropped module defines.
	dependent := "module dependent\n\nextend type shadow\n  relations\n    define y: [user]\n"
	shadow := "module shadow\n\ntype example_com_widget\n\ntype shadow\n  relations\n    define x: [user]\n"

	model, rejected, err := ComposeSkipping(Module{Name: CoreModuleName, Contents: CoreModule}, []Module{
		{Name: "widgets", Contents: ResourceModule(widget)},
		{Name: "dup", Contents: dupType},
		{Name: "duprel", Contents: dupRelation},
		{Name: "undefined", Contents: undefined},
		{Name: "broken", Contents: broken},
		{Name: "shadow", Contents: shadow},
		{Name: "dependent", Contents: dependent},
		{Name: "gadgets", Contents: ResourceModule(gadget)},
		{Name: "gadgets", Contents: ResourceModule(gadget)},
	})
	if err != nil {
		t.Fatalf("composition failed as a whole: %v", err)
	}
	for name, want := range map[string]string{
		"dup":       "type example_com_widget is already defined by module \"widgets\"",
		"duprel":    "relation create_core_configmaps of type core_namespace is already defined by module \"core\"",
		"undefined": "extended type nowhere is not defined",
		"broken":    "",
		"shadow":    "type example_com_widget is already defined",
		"dependent": "extended type shadow is not defined",
		"gadgets":   "used twice",
	} {
		err, ok := rejected[name]
		if !ok {
			t.Errorf("module %s was not rejected", name)
			continue
		}
		if !strings.Contains(err.Error(), want) {
			t.Errorf("module %s rejected with %q, want it to say %q", name, err, want)
		}
	}
	typeDef(t, model, "example_com_widget")
	typeDef(t, model, "example_com_gadget")
	hasRelations(t, typeDef(t, model, AccountType), "create_example_com_gadgets")
}

func TestComposeSkippingBadCore(t *testing.T) {
	if _, _, err := ComposeSkipping(Module{Name: "core", Contents: "module core\n\ntype"}, nil); err == nil {
		t.Fatal("a broken core module composed")
	}
	ext := "module core\n\nextend type user\n  relations\n    define x: [user]\n"
	if _, _, err := ComposeSkipping(Module{Name: "core", Contents: ext}, nil); err == nil {
		t.Fatal("a core module that only extends composed")
	}
}

// grantedTo returns the relation a relation is defined as when it is
// exactly one computed relation of the same object ("define delete:
// owner"), else "".
func grantedTo(t *testing.T, model *openfgav1.AuthorizationModel, typ, rel string) string {
	t.Helper()
	us, ok := typeDef(t, model, typ).GetRelations()[rel]
	if !ok {
		t.Fatalf("type %s has no relation %s", typ, rel)
	}
	return us.GetComputedUserset().GetRelation()
}

// objectGrants is who may do what with one object of any type: members
// read and see the roles, owners write, delete and manage the roles.
var objectGrants = map[string]string{
	"get": RelationMember, "watch": RelationMember,
	"update": RelationOwner, "patch": RelationOwner, "delete": RelationOwner,
	"manage_iam_roles": RelationOwner, "get_iam_roles": RelationMember, "get_iam_users": RelationMember,
}

func wantGrants(t *testing.T, model *openfgav1.AuthorizationModel, typ string, grants map[string]string) {
	t.Helper()
	for rel, want := range grants {
		if got := grantedTo(t, model, typ, rel); got != want {
			t.Errorf("%s: %s is granted to %q, want exactly %q", typ, rel, got, want)
		}
	}
}

// Issue 23: a member of an organization could update, patch and delete
// the Accounts in it (and so take another member's workspace and data);
// members only read an Account, its owners (its creator, the parent's
// owners) change and delete it.
func TestAccountPermissions(t *testing.T) {
	model, err := Compose([]Module{{Name: CoreModuleName, Contents: CoreModule}})
	if err != nil {
		t.Fatal(err)
	}
	wantGrants(t, model, AccountType, objectGrants)
	wantGrants(t, model, AccountType, map[string]string{
		AccountResource.Relation("create"): RelationOwner,
		AccountResource.Relation("list"):   RelationMember,
		AccountResource.Relation("watch"):  RelationMember,
	})
	for _, r := range BuiltinResources {
		wantGrants(t, model, r.Type(), objectGrants)
	}
	// Owners are members, and both are inherited from the parent
	// account: an organization's owners own (and may delete) every
	// account below it.
	acc := typeDef(t, model, AccountType).GetRelations()
	owner := acc[RelationOwner].GetUnion().GetChild()
	if len(owner) != 2 || owner[1].GetTupleToUserset().GetTupleset().GetRelation() != RelationParent ||
		owner[1].GetTupleToUserset().GetComputedUserset().GetRelation() != RelationOwner {
		t.Errorf("account owner is %v, want direct or owner from parent", acc[RelationOwner])
	}
	member := acc[RelationMember].GetUnion().GetChild()
	if len(member) != 3 || member[1].GetComputedUserset().GetRelation() != RelationOwner ||
		member[2].GetTupleToUserset().GetComputedUserset().GetRelation() != RelationMember {
		t.Errorf("account member is %v, want direct, owner or member from parent", acc[RelationMember])
	}
}

// Organizations created before a model change carry the earlier core
// module in their Store; it is replaced by the current one, a core module
// written by hand is kept.
func TestCurrentCoreModule(t *testing.T) {
	files, err := filepath.Glob("testdata/core-module-*.fga")
	if err != nil || len(files) != len(previousCoreModules) {
		t.Fatalf("testdata has %d earlier core modules, previousCoreModules %d (%v)", len(files), len(previousCoreModules), err)
	}
	for _, f := range files {
		old, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if got, changed := CurrentCoreModule(string(old)); !changed || got != CoreModule {
			t.Errorf("%s is not replaced by the current core module", f)
		}
		if _, err := Compose([]Module{{Name: CoreModuleName, Contents: string(old)}}); err != nil {
			t.Errorf("%s does not parse: %v", f, err)
		}
	}
	for _, spec := range []string{CoreModule, CoreModule + "\n", "module core\n\ntype user\n", ""} {
		if got, changed := CurrentCoreModule(spec); changed || got != spec {
			t.Errorf("core module %.40q was replaced", spec)
		}
	}
}
