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

// nilIfEmpty turns a nil *T into an untyped nil, so "null" is written.
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
			ts := o.Types()
			out := make([]any, len(ts))
			for i := range ts {
				out[i] = &ts[i]
			}
			return out, nil
		case "queryType":
			return typePtr(o.QueryType()), nil
		case "mutationType":
			return typePtr(o.MutationType()), nil
		case "subscriptionType":
			return typePtr(o.SubscriptionType()), nil
		case "directives":
			ds := o.Directives()
			out := make([]any, len(ds))
			for i := range ds {
				out[i] = &ds[i]
			}
			return out, nil
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
			fs := o.Fields(includeDeprecated(args))
			if fs == nil {
				return nil, nil
			}
			out := make([]any, len(fs))
			for i := range fs {
				out[i] = &fs[i]
			}
			return out, nil
		case "inputFields":
			fs := o.InputFields()
			if fs == nil {
				return nil, nil
			}
			out := make([]any, len(fs))
			for i := range fs {
				out[i] = &fs[i]
			}
			return out, nil
		case "enumValues":
			es := o.EnumValues(includeDeprecated(args))
			if es == nil {
				return nil, nil
			}
			out := make([]any, len(es))
			for i := range es {
				out[i] = &es[i]
			}
			return out, nil
		case "interfaces", "possibleTypes":
			var ts []introspection.Type
			if field == "interfaces" {
				ts = o.Interfaces()
			} else {
				ts = o.PossibleTypes()
			}
			if ts == nil {
				return nil, nil
			}
			out := make([]any, len(ts))
			for i := range ts {
				out[i] = &ts[i]
			}
			return out, nil
		}
	case *introspection.Field:
		switch field {
		case "name":
			return o.Name, nil
		case "description":
			return strPtr(o.Description()), nil
		case "args":
			return inputValues(o.Args), nil
		case "type":
			return typePtr(o.Type), nil
		case "isDeprecated":
			return o.IsDeprecated(), nil
		case "deprecationReason":
			return strPtr(o.DeprecationReason()), nil
		}
	case *introspection.InputValue:
		switch field {
		case "name":
			return o.Name, nil
		case "description":
			return strPtr(o.Description()), nil
		case "type":
			return typePtr(o.Type), nil
		case "defaultValue":
			return strPtr(o.DefaultValue), nil
		case "isDeprecated":
			return o.IsDeprecated(), nil
		case "deprecationReason":
			return strPtr(o.DeprecationReason()), nil
		}
	case *introspection.EnumValue:
		switch field {
		case "name":
			return o.Name, nil
		case "description":
			return strPtr(o.Description()), nil
		case "isDeprecated":
			return o.IsDeprecated(), nil
		case "deprecationReason":
			return strPtr(o.DeprecationReason()), nil
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
			return inputValues(o.Args), nil
		case "isRepeatable":
			return o.IsRepeatable, nil
		}
	}
	return nil, fmt.Errorf("introspection field %s is not supported on %T", field, v)
}

func inputValues(in []introspection.InputValue) []any {
	out := make([]any, len(in))
	for i := range in {
		out[i] = &in[i]
	}
	return out
}
