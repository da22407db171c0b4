package fga

import (
	"errors"
	"sort"
	"strings"
	"testing"

	openfgav1 "github.com/openfga/api/proto/openfga/v1"
	"google.golang.org/protobuf/proto"
)

func composeT(t *testing.T, modules ...Module) *openfgav1.AuthorizationModel {
	t.Helper()
	m, rejected, err := ComposeSkipping(Module{Name: CoreModuleName, Contents: CoreModule}, modules)
	if err != nil || len(rejected) != 0 {
		t.Fatal(err, rejected)
	}
	return m
}

func resourceModule(group string, namespaced bool) Module {
	r := Resource{Group: group, Plural: "orders", Singular: "order", Namespaced: namespaced}
	return Module{Name: r.ModuleName(), Contents: ResourceModule(r)}
}

// definitions is a model's relations and conditions in a comparable form:
// "type#relation rewrite [user types]" and "condition name expression".
func definitions(m *openfgav1.AuthorizationModel) []string {
	var out []string
	for _, td := range m.GetTypeDefinitions() {
		out = append(out, "type "+td.GetType())
		for name, rel := range td.GetRelations() {
			var users []string
			for _, r := range td.GetMetadata().GetRelations()[name].GetDirectlyRelatedUserTypes() {
				users = append(users, r.GetType()+"#"+r.GetRelation()+"/"+r.GetCondition())
			}
			sort.Strings(users)
			b, _ := proto.MarshalOptions{Deterministic: true}.Marshal(rel)
			out = append(out, td.GetType()+"#"+name+" "+string(b)+" "+strings.Join(users, ","))
		}
	}
	for name, c := range m.GetConditions() {
		out = append(out, "condition "+name+" "+c.GetExpression())
	}
	sort.Strings(out)
	return out
}

// TestUnionOfTwoOrganizationsModels: the union of two organizations'
// models (core + each one's bound APIs) defines what composing all their
// modules at once defines, and adds nothing to itself.
func TestUnionOfTwoOrganizationsModels(t *testing.T) {
	a := composeT(t, resourceModule("orders.example.io", true))
	b := composeT(t, resourceModule("invoices.example.io", false), resourceModule("orders.example.io", true))
	a.Id = "01JAAAAAAAAAAAAAAAAAAAAAAA"
	before := proto.Clone(a)
	u, added, err := Union(a, b)
	if err != nil {
		t.Fatal(err)
	}
	if !added {
		t.Error("the union of a model and one with another type added nothing")
	}
	if !proto.Equal(a, before) {
		t.Error("Union modified its base")
	}
	if u.GetId() != "" {
		t.Errorf("the union has id %q, want none", u.GetId())
	}
	want := definitions(composeT(t, resourceModule("orders.example.io", true), resourceModule("invoices.example.io", false)))
	if got := definitions(u); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("union defines\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if _, added, err := Union(u, b); err != nil || added {
		t.Errorf("union with a model it holds: added=%v, err=%v; want nothing added", added, err)
	}
	if _, added, err := Union(u, composeT(t)); err != nil || added {
		t.Errorf("union with the core model alone: added=%v, err=%v; want nothing added", added, err)
	}
}

// TestUnionRefusesToRedefine: an organization whose model defines a type's
// relation differently (the same API group namespaced in one organization,
// cluster-scoped in another; a tenant's condition of the same name) gets
// no union: the shared model never changes a definition another
// organization's Checks use.
func TestUnionRefusesToRedefine(t *testing.T) {
	shared := composeT(t, resourceModule("orders.example.io", true))
	for name, other := range map[string]*openfgav1.AuthorizationModel{
		"cluster-scoped instead of namespaced": composeT(t, resourceModule("orders.example.io", false)),
		"a relation rewritten": func() *openfgav1.AuthorizationModel {
			m := composeT(t)
			for _, td := range m.GetTypeDefinitions() {
				if td.GetType() == NamespaceType {
					td.Relations["list_core_configmaps"] = &openfgav1.Userset{Userset: &openfgav1.Userset_This{This: &openfgav1.DirectUserset{}}}
				}
			}
			return m
		}(),
		"a relation's user types widened": func() *openfgav1.AuthorizationModel {
			m := composeT(t)
			for _, td := range m.GetTypeDefinitions() {
				if td.GetType() == AccountType {
					meta := td.GetMetadata().GetRelations()[RelationMember]
					meta.DirectlyRelatedUserTypes = append(meta.DirectlyRelatedUserTypes, &openfgav1.RelationReference{Type: UserType, RelationOrWildcard: &openfgav1.RelationReference_Wildcard{Wildcard: &openfgav1.Wildcard{}}})
				}
			}
			return m
		}(),
	} {
		t.Run(name, func(t *testing.T) {
			before := proto.Clone(shared)
			if _, _, err := Union(shared, other); !errors.Is(err, ErrConflict) {
				t.Errorf("err = %v, want ErrConflict", err)
			}
			if !proto.Equal(shared, before) {
				t.Error("Union modified its base")
			}
		})
	}
	withCondition := func(expr string) *openfgav1.AuthorizationModel {
		m := composeT(t)
		m.Conditions = map[string]*openfgav1.Condition{"in_hours": {Name: "in_hours", Expression: expr,
			Parameters: map[string]*openfgav1.ConditionParamTypeRef{"hour": {TypeName: openfgav1.ConditionParamTypeRef_TYPE_NAME_INT}}}}
		return m
	}
	u, added, err := Union(shared, withCondition("hour < 18"))
	if err != nil || !added {
		t.Fatalf("adding a condition: added=%v, err=%v", added, err)
	}
	if _, _, err := Union(u, withCondition("hour < 24")); !errors.Is(err, ErrConflict) {
		t.Errorf("a condition redefined: err = %v, want ErrConflict", err)
	}
	if _, added, err := Union(u, withCondition("hour < 18")); err != nil || added {
		t.Errorf("the same condition again: added=%v, err=%v; want nothing added", added, err)
	}
}
