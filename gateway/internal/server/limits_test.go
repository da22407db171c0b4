package server

import (
	"testing"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"
)

func TestSelectionDepth(t *testing.T) {
	for _, tc := range []struct {
		query string
		want  int
	}{
		{`{ a }`, 1},
		{`{ a { b { c } } d }`, 3},
		{`{ a { __type(name: "X") { fields { type { ofType { name } } } } } }`, 1},
		{`{ a { ...F } } fragment F on T { b { c } }`, 3},
		{`{ a { ... on T { b { c { d } } } } }`, 4},
	} {
		doc, err := parser.ParseQuery(&ast.Source{Input: tc.query})
		if err != nil {
			t.Fatalf("%s: %v", tc.query, err)
		}
		if got := selectionDepth(doc, doc.Operations[0].SelectionSet, map[string]bool{}); got != tc.want {
			t.Errorf("depth of %s = %d, want %d", tc.query, got, tc.want)
		}
	}
}
