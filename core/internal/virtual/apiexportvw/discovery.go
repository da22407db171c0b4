package apiexportvw

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	apisv1alpha2 "github.com/kcp-dev/sdk/apis/apis/v1alpha2"
	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// aggregatedJSON is the media type of aggregated discovery in JSON.
const aggregatedJSON = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"

// WithDiscovery narrows discovery through the virtual workspace to what
// the export serves there, as kcp's virtual workspace shows it: the
// exported resources, the claimed resources and APIBindings (read by
// providers). It must run after authentication and authorization; other
// requests pass through.
func WithDiscovery(next http.Handler, exports Exports) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t, ok := From(r.Context())
		path := strings.TrimSuffix(r.URL.Path, "/")
		if !ok || r.Method != http.MethodGet || !isDiscovery(path) {
			next.ServeHTTP(w, r)
			return
		}
		export, err := exports.Export(r.Context(), t.Cluster, t.Name)
		if err != nil {
			fail(w, r, apierrors.NewNotFound(apisv1alpha2.Resource("apiexports"), t.Name))
			return
		}
		served := servedBy(export)
		aggregated := strings.Contains(r.Header.Get("Accept"), "as=APIGroupDiscoveryList")
		inner := r.Clone(r.Context())
		inner.Header.Set("Accept", "application/json")
		if aggregated {
			inner.Header.Set("Accept", aggregatedJSON)
		}
		rec := &recorder{header: http.Header{}, code: http.StatusOK}
		next.ServeHTTP(rec, inner)
		if rec.code != http.StatusOK {
			rec.copyTo(w, rec.body.Bytes())
			return
		}
		out, found, err := narrow(path, rec.header.Get("Content-Type"), rec.body.Bytes(), served)
		switch {
		case err != nil:
			fail(w, r, apierrors.NewInternalError(fmt.Errorf("narrowing discovery of %s: %w", path, err)))
		case !found:
			fail(w, r, apierrors.NewNotFound(schema.GroupResource{}, path))
		default:
			rec.copyTo(w, out)
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

// servedBy returns the resources the export serves, by group.
func servedBy(export *apisv1alpha2.APIExport) map[string]map[string]bool {
	out := map[string]map[string]bool{apisv1alpha2.SchemeGroupVersion.Group: {"apibindings": true}}
	add := func(group, resource string) {
		if out[group] == nil {
			out[group] = map[string]bool{}
		}
		out[group][resource] = true
	}
	for _, r := range export.Spec.Resources {
		add(r.Group, r.Name)
	}
	for _, c := range export.Spec.PermissionClaims {
		add(c.Group, c.Resource)
	}
	return out
}

// narrow filters one discovery document; found is false when nothing of
// it is served.
func narrow(path, contentType string, body []byte, served map[string]map[string]bool) ([]byte, bool, error) {
	parts := strings.Split(strings.TrimPrefix(path, "/"), "/")
	if strings.Contains(contentType, "as=APIGroupDiscoveryList") {
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
		base, _, _ := strings.Cut(res.Name, "/")
		if resources[base] {
			kept = append(kept, res)
		}
	}
	l.APIResources = kept
	out, err := json.Marshal(&l)
	return out, true, err
}

// recorder keeps a response to rewrite it.
type recorder struct {
	header http.Header
	code   int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header         { return r.header }
func (r *recorder) WriteHeader(code int)        { r.code = code }
func (r *recorder) Write(b []byte) (int, error) { return r.body.Write(b) }

// copyTo writes the recorded response with body. The ETag goes: it is
// the unfiltered document's.
func (r *recorder) copyTo(w http.ResponseWriter, body []byte) {
	for k, v := range r.header {
		if k != "Content-Length" && k != "Etag" {
			w.Header()[k] = v
		}
	}
	w.WriteHeader(r.code)
	_, _ = w.Write(body)
}
