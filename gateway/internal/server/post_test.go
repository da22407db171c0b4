package server

import (
	"encoding/json"
	"net/http/httptest"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// TestEncodeResponse: the direct encoding is byte for byte what
// encoding/json makes of the same response.
func TestEncodeResponse(t *testing.T) {
	tr := true
	for _, resp := range []*graphql.Response{
		{Data: json.RawMessage(`{"v1":{"ConfigMaps":{"items":[{"metadata":{"name":"a\u00e9\"b"}}]}}}`)},
		{},
		{Data: json.RawMessage(`null`), Errors: gqlerror.List{{Message: "boom", Path: ast.Path{ast.PathName("v1"), ast.PathIndex(2)}, Extensions: map[string]any{"code": "NotFound", "status": 404}}}},
		{Data: json.RawMessage(`{"a":1}`), Extensions: map[string]any{"complexity": 3}},
		{Data: json.RawMessage(`{"a":1}`), Label: "l", Path: ast.Path{ast.PathName("x")}, HasNext: &tr},
	} {
		want, err := json.Marshal(resp)
		if err != nil {
			t.Fatal(err)
		}
		if got := encodeResponse(resp); string(got) != string(want) {
			t.Errorf("encodeResponse:\n got %s\nwant %s", got, want)
		}
	}
}

func TestResponseContentType(t *testing.T) {
	for accept, want := range map[string]string{
		"":                                  "application/json",
		"*/*":                               "application/json",
		"application/json":                  "application/json",
		"application/graphql-response+json": "application/graphql-response+json",
		"text/plain, application/graphql-response+json;q=0.9, application/json": "application/graphql-response+json",
		"text/plain": "application/graphql-response+json",
	} {
		r := httptest.NewRequest("POST", "/", nil)
		if accept != "" {
			r.Header.Set("Accept", accept)
		}
		if got := responseContentType(r); got != want {
			t.Errorf("Accept %q: %s, want %s", accept, got, want)
		}
	}
}
