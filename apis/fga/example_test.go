package fga_test

import (
	"fmt"

	"github.com/meshplane/meshplane/apis/fga"
)

// The module generated for a namespaced resource bound in an organization.
func ExampleResourceModule() {
	fmt.Print(fga.ResourceModule(fga.Resource{Group: "example.com", Plural: "widgets", Singular: "widget", Namespaced: true}))
	// Output:
	// module example_com_widgets
	//
	// extend type core_namespace
	//   relations
	//     define create_example_com_widgets: owner
	//     define list_example_com_widgets: member
	//     define watch_example_com_widgets: member
	//
	// type example_com_widget
	//   relations
	//     define parent: [core_namespace]
	//     define owner: [user, role#assignee] or owner from parent
	//     define member: [user, role#assignee] or owner or member from parent
	//     define get: member
	//     define update: owner
	//     define patch: owner
	//     define delete: owner
	//     define watch: member
	//     define manage_iam_roles: owner
	//     define get_iam_roles: member
	//     define get_iam_users: member
}

// What the webhook checks when bob lists configmaps in namespace default of
// the account workspace with logical cluster 1a2b (Account "team" held by
// cluster 0org).
func ExampleRelationName() {
	fmt.Println(fga.NamespaceObject("1a2b", "default"), fga.RelationName("list", "", "configmaps"), fga.UserID("bob"))
	fmt.Println(fga.ObjectID(fga.TypeName("", "secret"), "1a2b", "prod", "dbcreds"), fga.UserID("system:serviceaccount:prod:robot"))
	fmt.Println(fga.AccountObject("0org", "team"))
	// Output:
	// core_namespace:1a2b/default list_core_configmaps user:bob
	// core_secret:1a2b/prod/dbcreds user:system|3Aserviceaccount|3Aprod|3Arobot
	// core_platform-mesh_io_account:0org/team
}
