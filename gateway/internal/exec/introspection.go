package exec

import (
	"fmt"

	"github.com/99designs/gqlgen/graphql/introspection"
	"github.com/vektah/gqlparser/v2/ast"
)

// introRoot resolves Query.__schema and Query.__type.
func introRoot(s *ast.Schema, field string, args map[string]any) (any, error) {
	switch field {
	case "__schema":
		return introspection.WrapSchema(s), nil
	case "__type":
		name, _ := args["name"].(string)
		def := s.Types[name]
		if def == nil {
			return nil, nil
		}
		return introspection.WrapTypeFromDef(s, def), nil
	}
	return nil, fmt.Errorf("unknown introspection field %s", field)
}

func includeDeprecated(args map[string]any) bool {
	b, _ := args["includeDeprecated"].(bool)
	return b
}

// typePtr turns a nil *Type into an untyped nil, so "null" is written.
func typePtr(t *introspection.Type) any {
	if t == nil {
		return nil
	}
	return t
}

func strPtr(s *string) any {
	if s == nil {
		return nil
	}
	return *s
}

// introField resolves a field of an introspection object (gqlgen's
// introspection package wraps the ast.Schema; this maps the spec's field
// names onto its methods).
func introField(_ *ast.Schema, v any, field string, args map[string]any) (any, error) {
	switch o := v.(type) {
	case *introspection.Schema:
		switch field {
		case "description":
			return strPtr(o.Description()), nil
		case "types":
			return list(o.Types()), nil
		case "queryType":
			return typePtr(o.QueryType()), nil
		case "mutationType":
			return typePtr(o.MutationType()), nil
		case "subscriptionType":
			return typePtr(o.SubscriptionType()), nil
		case "directives":
			return list(o.Directives()), nil
		}
	case *introspection.Type:
		switch field {
		case "kind":
			return o.Kind(), nil
		case "name":
			return strPtr(o.Name()), nil
		case "description":
			return strPtr(o.Description()), nil
		case "specifiedByURL":
			return strPtr(o.SpecifiedByURL()), nil
		case "isOneOf":
			return o.IsOneOf(), nil
		case "ofType":
			return typePtr(o.OfType()), nil
		case "fields":
			return listOrNull(o.Fields(includeDeprecated(args))), nil
		case "inputFields":
			return listOrNull(o.InputFields()), nil
		case "enumValues":
			return listOrNull(o.EnumValues(includeDeprecated(args))), nil
		case "interfaces":
			return listOrNull(o.Interfaces()), nil
		case "possibleTypes":
			return listOrNull(o.PossibleTypes()), nil
		}
	case *introspection.Field:
		switch field {
		case "name":
			return o.Name, nil
		case "args":
			return list(o.Args), nil
		case "type":
			return typePtr(o.Type), nil
		}
		if v, ok := deprecation(o, field); ok {
			return v, nil
		}
	case *introspection.InputValue:
		switch field {
		case "name":
			return o.Name, nil
		case "type":
			return typePtr(o.Type), nil
		case "defaultValue":
			return strPtr(o.DefaultValue), nil
		}
		if v, ok := deprecation(o, field); ok {
			return v, nil
		}
	case *introspection.EnumValue:
		if field == "name" {
			return o.Name, nil
		}
		if v, ok := deprecation(o, field); ok {
			return v, nil
		}
	case *introspection.Directive:
		switch field {
		case "name":
			return o.Name, nil
		case "description":
			return strPtr(o.Description()), nil
		case "locations":
			out := make([]any, len(o.Locations))
			for i, l := range o.Locations {
				out[i] = l
			}
			return out, nil
		case "args":
			return list(o.Args), nil
		case "isRepeatable":
			return o.IsRepeatable, nil
		}
	}
	return nil, fmt.Errorf("introspection field %s is not supported on %T", field, v)
}

// deprecatable is what fields, arguments and enum values share.
type deprecatable interface {
	Description() *string
	IsDeprecated() bool
	DeprecationReason() *string
}

// deprecation resolves the members every deprecatable has.
func deprecation(d deprecatable, field string) (any, bool) {
	switch field {
	case "description":
		return strPtr(d.Description()), true
	case "isDeprecated":
		return d.IsDeprecated(), true
	case "deprecationReason":
		return strPtr(d.DeprecationReason()), true
	}
	return nil, false
}

// list returns pointers to the elements of xs, the introspection objects
// the executor walks.
func list[T any](xs []T) []any {
	out := make([]any, len(xs))
	for i := range xs {
		out[i] = &xs[i]
	}
	return out
}

// listOrNull is list with null for a nil slice.
func listOrNull[T any](xs []T) any {
	if xs == nil {
		return nil
	}
	return list(xs)
}
