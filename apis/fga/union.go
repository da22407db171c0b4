package fga

import (
	"errors"
	"fmt"
	"sort"

	openfgav1 "github.com/openfga/api/proto/openfga/v1"
	"google.golang.org/protobuf/proto"
)

// ErrConflict is wrapped by Union's error when both models define a type's
// relation or a condition differently.
var ErrConflict = errors.New("conflicting definitions")

// Union is the model of a store shared by several organizations
// (docs/authorization.md, Scale): base with the types, relations and
// conditions of add that base lacks. A relation or condition both define
// must be defined alike (its rewrite and directly related user types, or
// its expression and parameters; where it was written down is not
// compared), else the error wraps ErrConflict and names every conflict.
// So a union only ever adds: no organization changes a definition another
// organization's Checks use. base and add are not modified; added reports
// whether the union has anything base lacks. The result has no id.
func Union(base, add *openfgav1.AuthorizationModel) (union *openfgav1.AuthorizationModel, added bool, err error) {
	if base.GetSchemaVersion() != add.GetSchemaVersion() {
		return nil, false, fmt.Errorf("schema %q and %q differ", base.GetSchemaVersion(), add.GetSchemaVersion())
	}
	union = proto.Clone(base).(*openfgav1.AuthorizationModel)
	union.Id = ""
	types := map[string]*openfgav1.TypeDefinition{}
	for _, td := range union.GetTypeDefinitions() {
		types[td.GetType()] = td
	}
	var conflicts []string
	for _, td := range add.GetTypeDefinitions() {
		have, ok := types[td.GetType()]
		if !ok {
			c := proto.Clone(td).(*openfgav1.TypeDefinition)
			union.TypeDefinitions = append(union.TypeDefinitions, c)
			types[td.GetType()] = c
			added = true
			continue
		}
		names := make([]string, 0, len(td.GetRelations()))
		for name := range td.GetRelations() {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			rel, meta := td.GetRelations()[name], td.GetMetadata().GetRelations()[name]
			if cur, ok := have.GetRelations()[name]; ok {
				if !proto.Equal(cur, rel) || !sameUserTypes(have.GetMetadata().GetRelations()[name], meta) {
					conflicts = append(conflicts, td.GetType()+"#"+name)
				}
				continue
			}
			if have.Relations == nil {
				have.Relations = map[string]*openfgav1.Userset{}
			}
			have.Relations[name] = proto.Clone(rel).(*openfgav1.Userset)
			if meta != nil {
				if have.Metadata == nil {
					have.Metadata = &openfgav1.Metadata{}
				}
				if have.Metadata.Relations == nil {
					have.Metadata.Relations = map[string]*openfgav1.RelationMetadata{}
				}
				have.Metadata.Relations[name] = proto.Clone(meta).(*openfgav1.RelationMetadata)
			}
			added = true
		}
	}
	names := make([]string, 0, len(add.GetConditions()))
	for name := range add.GetConditions() {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		cond := add.GetConditions()[name]
		if cur, ok := union.GetConditions()[name]; ok {
			if cur.GetExpression() != cond.GetExpression() || !sameParameters(cur.GetParameters(), cond.GetParameters()) {
				conflicts = append(conflicts, "condition "+name)
			}
			continue
		}
		if union.Conditions == nil {
			union.Conditions = map[string]*openfgav1.Condition{}
		}
		union.Conditions[name] = proto.Clone(cond).(*openfgav1.Condition)
		added = true
	}
	if len(conflicts) > 0 {
		return nil, false, fmt.Errorf("%w: %v", ErrConflict, conflicts)
	}
	return union, added, nil
}

// sameUserTypes reports whether two relations take the same directly
// related user types (with their conditions), in any order.
func sameUserTypes(a, b *openfgav1.RelationMetadata) bool {
	key := func(m *openfgav1.RelationMetadata) []string {
		var keys []string
		for _, r := range m.GetDirectlyRelatedUserTypes() {
			k := r.GetType()
			switch {
			case r.GetWildcard() != nil:
				k += ":*"
			case r.GetRelation() != "":
				k += "#" + r.GetRelation()
			}
			keys = append(keys, k+" with "+r.GetCondition())
		}
		sort.Strings(keys)
		return keys
	}
	ka, kb := key(a), key(b)
	if len(ka) != len(kb) {
		return false
	}
	for i := range ka {
		if ka[i] != kb[i] {
			return false
		}
	}
	return true
}

// sameParameters reports whether two conditions take the same parameters.
func sameParameters(a, b map[string]*openfgav1.ConditionParamTypeRef) bool {
	if len(a) != len(b) {
		return false
	}
	for name, p := range a {
		if q, ok := b[name]; !ok || !proto.Equal(p, q) {
			return false
		}
	}
	return true
}
