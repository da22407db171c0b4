package server

import (
	"context"
	"fmt"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// ComplexityLimit rejects operations whose complexity is above Max. Every
// field counts, introspection fields (__schema, __type and all below them)
// included, and every alias counts on its own: gqlgen's own limit skips
// __schema, so 10,000 aliased __schema selections passed it. A field
// counts 1 plus its children, or what the schema's Complexity says (a list
// counts its children times its limit). The introspection roots count
// what they may read on top: __schema the whole schema (schemaCost),
// __type one type (typeCost); GraphiQL's introspection query is about 300.
// Without that a few hundred aliased __schema { types { fields { name } } }
// fit in the default limit of 1000 and took seconds and megabytes.
type ComplexityLimit struct {
	Max int

	es graphql.ExecutableSchema
}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationContextMutator
} = &ComplexityLimit{}

// ExtensionName names the extension.
func (*ComplexityLimit) ExtensionName() string { return "ComplexityLimit" }

// Validate keeps the schema, whose Complexity prices list fields.
func (c *ComplexityLimit) Validate(es graphql.ExecutableSchema) error {
	c.es = es
	return nil
}

// MutateOperationContext measures the operation.
func (c *ComplexityLimit) MutateOperationContext(ctx context.Context, oc *graphql.OperationContext) *gqlerror.Error {
	if c.Max <= 0 || oc.Operation == nil {
		return nil
	}
	w := &complexityWalker{ctx: ctx, es: c.es, vars: oc.Variables, max: c.Max, fragments: map[string]int{}}
	n := w.selectionSet(oc.Operation.SelectionSet)
	if n > c.Max {
		return &gqlerror.Error{
			Message:    fmt.Sprintf("the operation's complexity is more than the limit of %d (every field counts, introspection included, each alias on its own; a list counts its fields times its limit)", c.Max),
			Extensions: map[string]any{"code": "COMPLEXITY_LIMIT_EXCEEDED", "limit": c.Max},
		}
	}
	return nil
}

// complexityWalker adds up an operation's complexity. It stops at max+1:
// no term is negative and list factors are at least 1, so a partial sum
// over the limit means the whole is over it, and walking on would only
// cost time. A fragment is measured once (its fields' types do not
// depend on where it is spread).
type complexityWalker struct {
	ctx       context.Context
	es        graphql.ExecutableSchema
	vars      map[string]any
	max       int
	fragments map[string]int
}

func (w *complexityWalker) cap(n int) int {
	if n > w.max || n < 0 {
		return w.max + 1
	}
	return n
}

func (w *complexityWalker) selectionSet(sel ast.SelectionSet) int {
	total := 0
	for _, s := range sel {
		switch s := s.(type) {
		case *ast.Field:
			total += w.field(s)
		case *ast.InlineFragment:
			total += w.selectionSet(s.SelectionSet)
		case *ast.FragmentSpread:
			n, ok := w.fragments[s.Name]
			if !ok {
				if s.Definition != nil {
					n = w.selectionSet(s.Definition.SelectionSet)
				}
				w.fragments[s.Name] = n
			}
			total += n
		}
		if total = w.cap(total); total > w.max {
			return total
		}
	}
	return total
}

// schemaCost and typeCost are what __schema and __type add to their
// field's complexity.
const (
	schemaCost = 100
	typeCost   = 10
)

func (w *complexityWalker) field(f *ast.Field) int {
	child := 0
	switch f.Name {
	case "__schema":
		child = schemaCost
	case "__type":
		child = typeCost
	}
	if len(f.SelectionSet) > 0 {
		child = w.cap(child + w.selectionSet(f.SelectionSet))
		if child > w.max {
			return child
		}
	}
	if f.Definition == nil || f.ObjectDefinition == nil {
		return w.cap(1 + child)
	}
	args := f.ArgumentMap(w.vars)
	best := 0
	types := []*ast.Definition{f.ObjectDefinition}
	if f.ObjectDefinition.Kind == ast.Interface {
		// The most expensive of the implementations.
		types = w.es.Schema().GetPossibleTypes(f.ObjectDefinition)
	}
	for _, t := range types {
		n := 1 + child
		if c, ok := w.es.Complexity(w.ctx, t.Name, f.Name, child, args); ok && c >= 1 {
			n = c
		}
		best = max(best, n)
	}
	return w.cap(best)
}
