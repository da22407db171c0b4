package server

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/introspection"
	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
)

// listSchema prices the field "items" like the executor prices a list:
// its children times its limit (10 when unset).
type listSchema struct{ s *ast.Schema }

func (l listSchema) Schema() *ast.Schema { return l.s }
func (l listSchema) Complexity(_ context.Context, _, field string, child int, args map[string]any) (int, bool) {
	if field != "items" {
		return 0, false
	}
	n := 10
	if v, ok := args["limit"].(int64); ok {
		n = int(v)
	}
	return 1 + child*n, true
}
func (listSchema) Exec(context.Context) graphql.ResponseHandler { return nil }

func TestComplexity(t *testing.T) {
	s := gqlparser.MustLoadSchema(&ast.Source{Input: `
type Query { items(limit: Int): [Item] one: Item }
type Item { name: String sub: Item }`})
	c := &ComplexityLimit{Max: 1000}
	_ = c.Validate(listSchema{s})
	// many selects sel n times, each under its own alias.
	many := func(n int, sel string) string {
		var b strings.Builder
		b.WriteString("{")
		for i := range n {
			fmt.Fprintf(&b, " a%d: %s", i, sel)
		}
		return b.String() + " }"
	}
	for _, tc := range []struct {
		name, query string
		want        int // -1: over the limit
	}{
		{"fields", `{ one { name sub { name } } }`, 4},
		{"list by limit", `{ items(limit: 5) { name } }`, 6},
		{"aliases count each", `{ a: one { name } b: one { name } }`, 4},
		{"__typename", `{ __typename }`, 1},
		{"__schema counts", `{ __schema { queryType { name } } }`, 1 + schemaCost + 2},
		{"__type counts", `{ __type(name: "Item") { name } }`, 1 + typeCost + 1},
		{"fragments", `{ one { ...F } items(limit: 2) { ...F } } fragment F on Item { name sub { name } }`, 4 + 1 + 2*3},
		{"9 aliased __schema", many(9, `__schema { queryType { name } }`), 9 * (3 + schemaCost)},
		{"10 aliased __schema", many(10, `__schema { queryType { name } }`), -1},
		{"10,000 aliased __schema", many(10000, `__schema { queryType { name } }`), -1},
		{"10,000 aliased __typename", many(10000, `__typename`), -1},
	} {
		doc, errs := gqlparser.LoadQuery(s, tc.query)
		if len(errs) > 0 {
			t.Fatalf("%s: %v", tc.name, errs)
		}
		oc := &graphql.OperationContext{Doc: doc, Operation: doc.Operations[0]}
		w := &complexityWalker{ctx: context.Background(), es: c.es, max: c.Max, fragments: map[string]int{}}
		got := w.selectionSet(oc.Operation.SelectionSet)
		err := c.MutateOperationContext(context.Background(), oc)
		switch {
		case tc.want < 0 && (got <= c.Max || err == nil):
			t.Errorf("%s: complexity %d, error %v; want it refused", tc.name, got, err)
		case tc.want >= 0 && (got != tc.want || err != nil):
			t.Errorf("%s: complexity %d, error %v; want %d and no error", tc.name, got, err, tc.want)
		}
		if err != nil && (!strings.Contains(err.Message, "limit of 1000") || err.Extensions["code"] != "COMPLEXITY_LIMIT_EXCEEDED") {
			t.Errorf("%s: error %q %v", tc.name, err.Message, err.Extensions)
		}
	}

	// GraphiQL's introspection query fits with room to spare.
	doc, errs := gqlparser.LoadQuery(s, introspection.Query)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	w := &complexityWalker{ctx: context.Background(), es: c.es, max: c.Max, fragments: map[string]int{}}
	n := w.selectionSet(doc.Operations[0].SelectionSet)
	t.Logf("GraphiQL's introspection query: complexity %d", n)
	if n > c.Max/2 {
		t.Errorf("GraphiQL's introspection query has complexity %d, more than half the default limit", n)
	}
}
