package graphiql

import (
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/fstest"
)

func files() fstest.MapFS {
	m := fstest.MapFS{}
	for _, f := range required {
		m[f] = &fstest.MapFile{Data: []byte("/* " + f + " */")}
	}
	return m
}

func TestPage(t *testing.T) {
	h := NewFromFS(files())
	if len(h.Missing()) != 0 {
		t.Fatalf("missing %v", h.Missing())
	}
	rec := httptest.NewRecorder()
	h.ServePage(rec, "root:orgs:acme")
	body := rec.Body.String()
	if rec.Code != 200 || !strings.Contains(rec.Header().Get("Content-Type"), "text/html") {
		t.Fatalf("page: %d %s", rec.Code, rec.Header())
	}
	for _, want := range []string{`src="/graphiql/graphiql.min.js"`, `href="/graphiql/graphiql.min.css"`, "subscriptionUrl: wsURL", "root:orgs:acme", `"# Put your token into the Headers tab`} {
		if !strings.Contains(body, want) {
			t.Errorf("the page lacks %q:\n%s", want, body)
		}
	}
}

func TestPageWithoutFiles(t *testing.T) {
	h := NewFromFS(fstest.MapFS{"README.md": &fstest.MapFile{Data: []byte("x")}})
	if len(h.Missing()) != len(required) {
		t.Fatalf("missing %v, want all of %v", h.Missing(), required)
	}
	rec := httptest.NewRecorder()
	h.ServePage(rec, "root")
	if rec.Code != http.StatusServiceUnavailable || !strings.Contains(rec.Body.String(), "scripts/fetch-graphiql.sh") {
		t.Fatalf("want 503 naming the fetch script, got %d: %s", rec.Code, rec.Body)
	}
}

func TestFiles(t *testing.T) {
	h := NewFromFS(files())
	get := func(path string, hdr map[string]string) *httptest.ResponseRecorder {
		req := httptest.NewRequest("GET", path, nil)
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	rec := get("/graphiql/graphiql.min.js", nil)
	if rec.Code != 200 || rec.Body.String() != "/* graphiql.min.js */" || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/javascript") {
		t.Fatalf("plain: %d %s %q", rec.Code, rec.Header(), rec.Body)
	}
	etag := rec.Header().Get("ETag")
	if rec := get("/graphiql/graphiql.min.js", map[string]string{"If-None-Match": etag}); rec.Code != http.StatusNotModified {
		t.Errorf("If-None-Match: %d", rec.Code)
	}
	rec = get("/graphiql/graphiql.min.css", map[string]string{"Accept-Encoding": "gzip, br"})
	zr, err := gzip.NewReader(rec.Body)
	if err != nil || rec.Header().Get("Content-Encoding") != "gzip" {
		t.Fatalf("gzip: %v %s", err, rec.Header())
	}
	if b, _ := io.ReadAll(zr); string(b) != "/* graphiql.min.css */" {
		t.Errorf("gzip body %q", b)
	}
	for _, p := range []string{"/graphiql/", "/graphiql/nope.js", "/graphiql/../page.html", "/graphiql/.stamp"} {
		if rec := get(p, nil); rec.Code != 404 {
			t.Errorf("%s: %d, want 404", p, rec.Code)
		}
	}
}
