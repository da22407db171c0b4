package server

import (
	"context"
	"fmt"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// DepthLimit rejects operations nested deeper than Max. Introspection
// fields (__schema, __type) do not count, so GraphiQL's own introspection
// query is never refused.
type DepthLimit struct{ Max int }

var _ interface {
	graphql.HandlerExtension
	graphql.OperationContextMutator
} = DepthLimit{}

// ExtensionName names the extension.
func (DepthLimit) ExtensionName() string { return "DepthLimit" }

// Validate accepts every schema.
func (DepthLimit) Validate(graphql.ExecutableSchema) error { return nil }

// MutateOperationContext measures the operation's depth.
func (d DepthLimit) MutateOperationContext(_ context.Context, oc *graphql.OperationContext) *gqlerror.Error {
	if d.Max <= 0 || oc.Operation == nil {
		return nil
	}
	depth := selectionDepth(oc.Doc, oc.Operation.SelectionSet, map[string]bool{})
	if depth > d.Max {
		return &gqlerror.Error{
			Message:    fmt.Sprintf("the operation is nested %d levels deep, more than the limit of %d", depth, d.Max),
			Extensions: map[string]any{"code": "DEPTH_LIMIT_EXCEEDED", "depth": depth, "limit": d.Max},
		}
	}
	return nil
}

func selectionDepth(doc *ast.QueryDocument, sel ast.SelectionSet, visiting map[string]bool) int {
	max := 0
	for _, s := range sel {
		d := 0
		switch s := s.(type) {
		case *ast.Field:
			if len(s.Name) > 1 && s.Name[:2] == "__" {
				continue
			}
			d = 1 + selectionDepth(doc, s.SelectionSet, visiting)
		case *ast.InlineFragment:
			d = selectionDepth(doc, s.SelectionSet, visiting)
		case *ast.FragmentSpread:
			if visiting[s.Name] || doc == nil {
				continue
			}
			if f := doc.Fragments.ForName(s.Name); f != nil {
				visiting[s.Name] = true
				d = selectionDepth(doc, f.SelectionSet, visiting)
				delete(visiting, s.Name)
			}
		}
		if d > max {
			max = d
		}
	}
	return max
}
