package discovery

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Served names the resources a narrowed discovery shows: group ->
// resource -> true.
type Served map[string]map[string]bool

// Narrowing returns what a request's discovery shows; ok false leaves the
// request alone.
type Narrowing func(r *http.Request) (served Served, ok bool, err error)

// WithNarrowing narrows discovery documents (legacy and aggregated) to
// the resources narrowing names, as virtual workspaces show only what they
// serve: other resources, and groups left empty, are dropped; a group or
// version document of a group not served is a 404. Non-discovery requests
// pass through.
func WithNarrowing(next http.Handler, narrowing Narrowing) http.Handler {
	return withNarrowing(next, narrowing, false)
}

// WithReadOnlyNarrowing is WithNarrowing that also shows the resources
// read-only: verbs get, list and watch at most.
func WithReadOnlyNarrowing(next http.Handler, narrowing Narrowing) http.Handler {
	return withNarrowing(next, narrowing, true)
}

func withNarrowing(next http.Handler, narrowing Narrowing, readOnly bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path := strings.TrimSuffix(r.URL.Path, "/")
		if r.Method != http.MethodGet || !isDiscovery(path) {
			next.ServeHTTP(w, r)
			return
		}
		served, ok, err := narrowing(r)
		if err != nil {
			fail(w, r, err)
			return
		}
		if !ok {
			next.ServeHTTP(w, r)
			return
		}
		aggregated := strings.Contains(r.Header.Get("Accept"), aggregatedAccept)
		inner := r.Clone(r.Context())
		inner.Header.Set("Accept", "application/json")
		if aggregated {
			inner.Header.Set("Accept", AggregatedContentType)
		}
		rec := NewRecorder()
		next.ServeHTTP(rec, inner)
		if rec.code != http.StatusOK {
			rec.CopyTo(w, rec.body.Bytes())
			return
		}
		out, found, err := narrow(path, rec.header.Get("Content-Type"), rec.body.Bytes(), served, readOnly)
		switch {
		case err != nil:
			fail(w, r, apierrors.NewInternalError(fmt.Errorf("narrowing discovery of %s: %w", path, err)))
		case !found:
			fail(w, r, apierrors.NewNotFound(schema.GroupResource{}, path))
		default:
			rec.CopyTo(w, out)
		}
	})
}

// isDiscovery reports whether path is a discovery document.
func isDiscovery(path string) bool {
	switch parts := strings.Split(strings.TrimPrefix(path, "/"), "/"); parts[0] {
	case "api":
		return len(parts) <= 2
	case "apis":
		return len(parts) <= 3
	}
	return false
}

// narrow filters one discovery document; found is false when nothing of
// it is served.
func narrow(path, contentType string, body []byte, served Served, readOnly bool) ([]byte, bool, error) {
	parts := strings.Split(strings.TrimPrefix(path, "/"), "/")
	if strings.Contains(contentType, aggregatedAccept) {
		var l apidiscoveryv2.APIGroupDiscoveryList
		if err := json.Unmarshal(body, &l); err != nil {
			return nil, false, err
		}
		items := l.Items[:0]
		for _, g := range l.Items {
			resources := served[g.Name]
			var versions []apidiscoveryv2.APIVersionDiscovery
			for _, v := range g.Versions {
				kept := v.Resources[:0]
				for _, res := range v.Resources {
					if resources[res.Resource] {
						if readOnly {
							res.Verbs, res.Subresources = readVerbs(res.Verbs), nil
						}
						kept = append(kept, res)
					}
				}
				if v.Resources = kept; len(kept) > 0 {
					versions = append(versions, v)
				}
			}
			if g.Versions = versions; len(versions) > 0 {
				items = append(items, g)
			}
		}
		l.Items = items
		out, err := json.Marshal(&l)
		return out, true, err
	}
	var group string
	switch {
	case parts[0] == "api" && len(parts) == 1:
		return body, true, nil // the versions of the core group
	case parts[0] == "apis" && len(parts) == 1:
		var l metav1.APIGroupList
		if err := json.Unmarshal(body, &l); err != nil {
			return nil, false, err
		}
		groups := l.Groups[:0]
		for _, g := range l.Groups {
			if served[g.Name] != nil {
				groups = append(groups, g)
			}
		}
		l.Groups = groups
		out, err := json.Marshal(&l)
		return out, true, err
	case parts[0] == "apis" && len(parts) == 2:
		return body, served[parts[1]] != nil, nil
	case parts[0] == "apis":
		group = parts[1]
	}
	resources := served[group]
	if resources == nil && parts[0] == "apis" {
		return nil, false, nil
	}
	var l metav1.APIResourceList
	if err := json.Unmarshal(body, &l); err != nil {
		return nil, false, err
	}
	kept := l.APIResources[:0]
	for _, res := range l.APIResources {
		base, sub, _ := strings.Cut(res.Name, "/")
		if resources[base] && (!readOnly || sub == "") {
			if readOnly {
				res.Verbs = readVerbs(res.Verbs)
			}
			kept = append(kept, res)
		}
	}
	l.APIResources = kept
	out, err := json.Marshal(&l)
	return out, true, err
}

// readVerbs keeps the reading verbs of verbs.
func readVerbs(verbs []string) []string {
	var out []string
	for _, v := range verbs {
		if v == "get" || v == "list" || v == "watch" {
			out = append(out, v)
		}
	}
	return out
}

// Recorder keeps a response to rewrite it.
type Recorder struct {
	header http.Header
	code   int
	body   bytes.Buffer
}

// NewRecorder returns an empty recorder (status 200 until written).
func NewRecorder() *Recorder { return &Recorder{header: http.Header{}, code: http.StatusOK} }

func (r *Recorder) Header() http.Header         { return r.header }
func (r *Recorder) WriteHeader(code int)        { r.code = code }
func (r *Recorder) Write(b []byte) (int, error) { return r.body.Write(b) }

// Code is the recorded status code.
func (r *Recorder) Code() int { return r.code }

// Body is the recorded body.
func (r *Recorder) Body() []byte { return r.body.Bytes() }

// CopyTo writes the recorded response with body. The ETag goes: it is
// the unfiltered document's.
func (r *Recorder) CopyTo(w http.ResponseWriter, body []byte) {
	for k, v := range r.header {
		if k != "Content-Length" && k != "Etag" {
			w.Header()[k] = v
		}
	}
	w.WriteHeader(r.code)
	_, _ = w.Write(body)
}
