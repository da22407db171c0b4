// Package graphiql serves the GraphiQL IDE: a page per workspace endpoint
// and the browser files it loads (GraphiQL, React, ReactDOM), which
// scripts/fetch-graphiql.sh puts into assets/ before the build embeds them.
// Nothing is loaded from outside the gateway.
package graphiql

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"sync"
)

// Prefix is the URL path under which the browser files are served.
const Prefix = "/graphiql/"

// required are the files the page loads.
var required = []string{"graphiql.min.js", "graphiql.min.css", "react.production.min.js", "react-dom.production.min.js"}

//go:embed assets
var embedded embed.FS

//go:embed page.html
var pageHTML string

var page = template.Must(template.New("page").Parse(pageHTML))

const defaultQuery = `# Put your token into the Headers tab below.
{
  v1 {
    ConfigMaps(limit: 10) {
      items { metadata { namespace name } }
    }
  }
}
`

// Handler serves GraphiQL pages and their files.
type Handler struct {
	files   fs.FS
	missing []string

	mu   sync.Mutex
	gzip map[string][]byte // compressed file contents, made on first request
}

// New returns a handler over the embedded files.
func New() *Handler {
	sub, _ := fs.Sub(embedded, "assets")
	return NewFromFS(sub)
}

// NewFromFS returns a handler over files (for a directory given on the
// command line).
func NewFromFS(files fs.FS) *Handler {
	h := &Handler{files: files, gzip: map[string][]byte{}}
	for _, f := range required {
		if _, err := fs.Stat(files, f); err != nil {
			h.missing = append(h.missing, f)
		}
	}
	return h
}

// Missing names the required files that are not there; GraphiQL cannot be
// served without them.
func (h *Handler) Missing() []string { return h.missing }

// ServePage answers a browser's GET of a workspace endpoint with GraphiQL
// set up for that endpoint, or, when the files were not built in, with a
// page that says so (503).
func (h *Handler) ServePage(w http.ResponseWriter, workspace string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	if len(h.missing) > 0 {
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintf(w, "<!DOCTYPE html><title>GraphiQL not available</title><p>GraphiQL is not available: this graphql-gateway was built without its browser files (missing %s). Run <code>scripts/fetch-graphiql.sh</code> (<code>make build</code> does) and rebuild the gateway, or start it with <code>--graphiql-assets DIR</code>. The endpoint itself works: POST GraphQL requests with <code>Authorization: Bearer &lt;token&gt;</code>.</p>\n",
			template.HTMLEscapeString(strings.Join(h.missing, ", ")))
		return
	}
	_ = page.Execute(w, map[string]any{"Workspace": workspace, "Assets": strings.TrimSuffix(Prefix, "/"), "DefaultQuery": defaultQuery})
}

// ServeHTTP serves the files under Prefix.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	name := strings.TrimPrefix(r.URL.Path, Prefix)
	if r.Method != http.MethodGet && r.Method != http.MethodHead || name == "" || strings.Contains(name, "/") || strings.HasPrefix(name, ".") {
		http.NotFound(w, r)
		return
	}
	b, err := fs.ReadFile(h.files, name)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	sum := sha256.Sum256(b)
	etag := `"` + hex.EncodeToString(sum[:12]) + `"`
	w.Header().Set("ETag", etag)
	w.Header().Set("Cache-Control", "public, max-age=3600")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	switch path.Ext(name) {
	case ".js":
		w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
	case ".css":
		w.Header().Set("Content-Type", "text/css; charset=utf-8")
	default:
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	}
	if r.Header.Get("If-None-Match") == etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	w.Header().Add("Vary", "Accept-Encoding")
	if strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
		w.Header().Set("Content-Encoding", "gzip")
		b = h.compressed(name, b)
	}
	w.Header().Set("Content-Length", fmt.Sprint(len(b)))
	if r.Method == http.MethodGet {
		_, _ = w.Write(b)
	}
}

// compressed returns b gzipped, compressing each file once.
func (h *Handler) compressed(name string, b []byte) []byte {
	h.mu.Lock()
	defer h.mu.Unlock()
	if z, ok := h.gzip[name]; ok {
		return z
	}
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	_, _ = zw.Write(b)
	_ = zw.Close()
	h.gzip[name] = buf.Bytes()
	return buf.Bytes()
}
