package mapping

import (
	"strings"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"

	"github.com/meshplane/meshplane/apis/fga"
)

// Every Check the mapping asks names a relation the model defines on
// the object's type, and each contextual tuple's relation too: for
// every verb on the Account kind, every built-in kind and a bound one,
// and for discovery and self reviews.
func TestQueriesMatchTheModel(t *testing.T) {
	widget := fga.Resource{Group: "example.com", Plural: "widgets", Singular: "widget", Namespaced: true}
	model, err := fga.Compose([]fga.Module{{Name: fga.CoreModuleName, Contents: fga.CoreModule},
		{Name: widget.ModuleName(), Contents: fga.ResourceModule(widget)}})
	if err != nil {
		t.Fatal(err)
	}
	relations := map[string]map[string]bool{}
	for _, td := range model.GetTypeDefinitions() {
		relations[td.GetType()] = map[string]bool{}
		for r := range td.GetRelations() {
			relations[td.GetType()][r] = true
		}
	}
	defined := func(what, object, relation string) {
		t.Helper()
		typ, _, _ := strings.Cut(object, ":")
		if !relations[typ][relation] {
			t.Errorf("%s: relation %s of %s is not in the model", what, relation, object)
		}
	}
	ws := Workspace{Cluster: "c1", Account: fga.AccountObject("org1", "team")}
	checked := func(what string, q Query) {
		t.Helper()
		defined(what, q.Object, q.Relation)
		for _, c := range q.Contextual {
			defined(what+" (contextual)", c.Object, c.Relation)
		}
	}
	kinds := append([]fga.Resource{fga.AccountResource, widget}, fga.BuiltinResources...)
	for _, res := range kinds {
		for verb := range verbs {
			ra := &authorizationv1.ResourceAttributes{Verb: verb, Group: res.Group, Resource: res.Plural, Name: "x"}
			if res.Namespaced {
				ra.Namespace = "default"
			}
			q, err := ForResource(ws, "bob", ra, res)
			if err != nil {
				t.Fatalf("%s %s: %v", verb, res.Plural, err)
			}
			checked(verb+" "+res.Plural, q)
		}
	}
	q, err := ForNonResource(ws, "bob", &authorizationv1.NonResourceAttributes{Path: "/api", Verb: "get"})
	if err != nil {
		t.Fatal(err)
	}
	checked("discovery", q)
	q, _ = ForSelfReview(ws, "bob", &authorizationv1.ResourceAttributes{Verb: "create", Group: "authorization.k8s.io", Resource: "selfsubjectaccessreviews"})
	checked("self review", q)
}
