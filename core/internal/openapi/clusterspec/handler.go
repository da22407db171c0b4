// Package clusterspec serves OpenAPI v2 and v3 per logical cluster: the
// built-in definitions every cluster shares, plus the cluster's own CRDs.
package clusterspec

import (
	"crypto/sha512"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strings"
	"sync"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/controller/openapi/builder"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/endpoints/handlers/responsewriters"
	"k8s.io/kube-openapi/pkg/spec3"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"k8s.io/utils/lru"

	builtinapi "github.com/meshplane/meshplane/core/internal/apis/builtin"
	"github.com/meshplane/meshplane/core/internal/clusters"
)

// CRDLister lists a cluster's CRDs.
type CRDLister interface {
	List(cluster string) []*apiextensionsv1.CustomResourceDefinition
}

// Handler answers /openapi/v2 and /openapi/v3 for the request's cluster.
//
// The built-in documents are read from Static once, on the first request
// that needs them. The documents built from CRDs are cached, keyed by the
// CRDs' UIDs and resourceVersions, so they are built again only when one
// of those CRDs changes.
type Handler struct {
	CRDs CRDLister
	// Static serves the built-in OpenAPI documents.
	Static http.Handler
	Next   http.Handler

	v2once      sync.Once
	staticV2    *spec.Swagger
	staticV2Err error

	v3once      sync.Once
	staticV3    map[string]v3Path
	staticV3Err error
	// staticCore is the built-in api/v1 document, read when a cluster
	// binds a kind of the core group.
	coreOnce      sync.Once
	staticCore    *spec3.OpenAPI
	staticCoreErr error

	cacheOnce sync.Once
	v2Cache   *lru.Cache // key of the cluster's CRDs -> merged v2 document (JSON)
	v3Cache   *lru.Cache // group version and key of its CRDs -> v3 document (JSON)
}

// Cache sizes bound the memory the cached documents take: a merged v2
// document holds every built-in definition (about 1.3 MB of JSON), a v3
// group-version document the CRDs of that version and the meta types
// they refer to (about 60 KB per CRD). With more clusters in use than
// entries, documents are rebuilt as before caching.
const (
	v2CacheSize = 8
	v3CacheSize = 64
)

type v3Index struct {
	Paths map[string]v3Path `json:"paths"`
}

type v3Path struct {
	ServerRelativeURL string `json:"serverRelativeURL"`
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p := strings.TrimSuffix(r.URL.Path, "/")
	cluster, ok := clusters.From(r.Context())
	if r.Method != http.MethodGet || !ok || (p != "/openapi/v2" && !strings.HasPrefix(p, "/openapi/v3")) {
		h.Next.ServeHTTP(w, r)
		return
	}
	h.cacheOnce.Do(func() {
		h.v2Cache, h.v3Cache = lru.New(v2CacheSize), lru.New(v3CacheSize)
	})
	switch {
	case p == "/openapi/v3":
		h.serveV3Index(w, r, cluster)
	case p == "/openapi/v3/"+coreGV:
		if crds := coreCRDs(h.CRDs.List(cluster)); len(crds) > 0 {
			h.serveCoreV3(w, r, crds)
			return
		}
		h.Next.ServeHTTP(w, r)
	case strings.HasPrefix(p, "/openapi/v3/apis/"):
		gv := strings.TrimPrefix(p, "/openapi/v3/")
		if crds := crdsOf(h.CRDs.List(cluster), gv); len(crds) > 0 {
			h.serveV3GroupVersion(w, r, gv, crds)
			return
		}
		h.Next.ServeHTTP(w, r)
	case p == "/openapi/v2":
		h.serveV2(w, r, cluster)
	default:
		h.Next.ServeHTTP(w, r)
	}
}

// serveV3Index lists the built-in group versions and the cluster's CRD
// group versions, with URLs that keep the /clusters/<name> prefix (clients
// follow serverRelativeURL as an absolute path).
func (h *Handler) serveV3Index(w http.ResponseWriter, r *http.Request, cluster string) {
	h.v3once.Do(func() {
		var index v3Index
		if h.staticV3Err = scrape(h.Static, "/openapi/v3", &index); h.staticV3Err == nil {
			h.staticV3 = index.Paths
		}
	})
	if h.staticV3Err != nil {
		fail(w, r, apierrors.NewInternalError(h.staticV3Err))
		return
	}
	index := v3Index{Paths: make(map[string]v3Path, len(h.staticV3))}
	prefix := "/clusters/" + cluster
	for k, v := range h.staticV3 {
		index.Paths[k] = v3Path{ServerRelativeURL: prefix + v.ServerRelativeURL}
	}
	all := h.CRDs.List(cluster)
	for _, gv := range groupVersions(all) {
		index.Paths[gv] = v3Path{ServerRelativeURL: prefix + "/openapi/v3/" + gv + "?hash=" + hashOf(crdsOf(all, gv))}
	}
	if core := coreCRDs(all); len(core) > 0 {
		index.Paths[coreGV] = v3Path{ServerRelativeURL: prefix + coreIndexURL(h.staticV3[coreGV].ServerRelativeURL, core)}
	}
	writeJSON(w, r, index)
}

func (h *Handler) serveV3GroupVersion(w http.ResponseWriter, r *http.Request, gv string, crds []crdVersion) {
	key := ""
	if cacheable(crds) {
		key = gv + "?" + hashOf(crds)
		if b, ok := h.v3Cache.Get(key); ok {
			write(w, b.([]byte))
			return
		}
	}
	var specs []*spec3.OpenAPI
	for _, c := range crds {
		s, err := builder.BuildOpenAPIV3(c.crd, c.version, builder.Options{})
		if err != nil {
			fail(w, r, apierrors.NewInternalError(fmt.Errorf("building OpenAPI of %s: %w", c.crd.Name, err)))
			return
		}
		specs = append(specs, s)
	}
	merged, err := builder.MergeSpecsV3(specs...)
	if err != nil {
		fail(w, r, apierrors.NewInternalError(fmt.Errorf("merging OpenAPI of %s: %w", gv, err)))
		return
	}
	b, err := json.Marshal(merged)
	if err != nil {
		fail(w, r, apierrors.NewInternalError(fmt.Errorf("encoding OpenAPI of %s: %w", gv, err)))
		return
	}
	if key != "" {
		h.v3Cache.Add(key, b)
	}
	write(w, b)
}

// serveV2 merges the cluster's CRDs into the static v2 document. Clients
// asking only for protobuf get the static document.
func (h *Handler) serveV2(w http.ResponseWriter, r *http.Request, cluster string) {
	all := h.CRDs.List(cluster)
	accept := r.Header.Get("Accept")
	if len(all) == 0 || (accept != "" && !strings.Contains(accept, "json") && !strings.Contains(accept, "*/*")) {
		h.Next.ServeHTTP(w, r)
		return
	}
	h.v2once.Do(func() {
		s := &spec.Swagger{}
		if h.staticV2Err = scrape(h.Static, "/openapi/v2", s); h.staticV2Err == nil {
			h.staticV2 = s
		}
	})
	if h.staticV2Err != nil {
		fail(w, r, apierrors.NewInternalError(h.staticV2Err))
		return
	}
	var served []crdVersion
	for _, crd := range established(all) {
		for _, v := range crd.Spec.Versions {
			if v.Served {
				served = append(served, crdVersion{crd: crd, version: v.Name})
			}
		}
	}
	key := ""
	if cacheable(served) {
		key = hashOf(sortedByName(served))
		if b, ok := h.v2Cache.Get(key); ok {
			write(w, b.([]byte))
			return
		}
	}
	var crdSpecs []*spec.Swagger
	for _, c := range served {
		// A version whose schema cannot be turned into a document is left
		// out, as apiextensions-apiserver does.
		s, err := builder.BuildOpenAPIV2(c.crd, c.version, builder.Options{V2: true, StripValueValidation: true, StripNullable: true, AllowNonStructural: true})
		if err == nil {
			crdSpecs = append(crdSpecs, s)
		}
	}
	merged, err := builder.MergeSpecs(h.staticV2, crdSpecs...)
	if err != nil {
		fail(w, r, apierrors.NewInternalError(fmt.Errorf("merging the OpenAPI v2 document: %w", err)))
		return
	}
	b, err := json.Marshal(merged)
	if err != nil {
		fail(w, r, apierrors.NewInternalError(fmt.Errorf("encoding the OpenAPI v2 document: %w", err)))
		return
	}
	if key != "" {
		h.v2Cache.Add(key, b)
	}
	write(w, b)
}

// scrape decodes Static's JSON answer to GET path into obj.
func scrape(static http.Handler, path string, obj any) error {
	req := httptest.NewRequest(http.MethodGet, path, nil)
	req.Header.Set("Accept", "application/json")
	rec := httptest.NewRecorder()
	static.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		return fmt.Errorf("reading the built-in %s: status %d", path, rec.Code)
	}
	if err := json.Unmarshal(rec.Body.Bytes(), obj); err != nil {
		return fmt.Errorf("decoding the built-in %s: %w", path, err)
	}
	return nil
}

// cacheable reports whether every CRD has a UID and a resourceVersion, so
// that hashOf identifies their content.
func cacheable(crds []crdVersion) bool {
	for _, c := range crds {
		if c.crd.UID == "" || c.crd.ResourceVersion == "" {
			return false
		}
	}
	return true
}

// sortedByName orders CRD versions by CRD name, then version, leaving in
// alone.
func sortedByName(in []crdVersion) []crdVersion {
	out := slices.Clone(in)
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].crd.Name != out[j].crd.Name {
			return out[i].crd.Name < out[j].crd.Name
		}
		return out[i].version < out[j].version
	})
	return out
}

type crdVersion struct {
	crd     *apiextensionsv1.CustomResourceDefinition
	version string
}

// established returns the established CRDs with OpenAPI paths of their
// own: not those of the core group (not in OpenAPI v2, in v3's api/v1).
func established(in []*apiextensionsv1.CustomResourceDefinition) []*apiextensionsv1.CustomResourceDefinition {
	var out []*apiextensionsv1.CustomResourceDefinition
	for _, crd := range in {
		if crd.Spec.Group == "" {
			continue // a bound kind of the core group joins api/v1 (core.go)
		}
		for _, c := range crd.Status.Conditions {
			if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue && crd.Status.AcceptedNames.Plural != "" {
				out = append(out, crd)
			}
		}
	}
	return out
}

// groupVersions returns "apis/<group>/<version>" of every served version.
func groupVersions(crds []*apiextensionsv1.CustomResourceDefinition) []string {
	seen := map[string]bool{}
	var out []string
	for _, crd := range established(crds) {
		for _, v := range crd.Spec.Versions {
			gv := "apis/" + crd.Spec.Group + "/" + v.Name
			if v.Served && !seen[gv] {
				seen[gv] = true
				out = append(out, gv)
			}
		}
	}
	sort.Strings(out)
	return out
}

func crdsOf(crds []*apiextensionsv1.CustomResourceDefinition, gv string) []crdVersion {
	var out []crdVersion
	for _, crd := range established(crds) {
		for _, v := range crd.Spec.Versions {
			if v.Served && "apis/"+crd.Spec.Group+"/"+v.Name == gv {
				out = append(out, crdVersion{crd: crd, version: v.Name})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].crd.Name < out[j].crd.Name })
	return out
}

func hashOf(crds []crdVersion) string {
	h := sha512.New()
	for _, c := range crds {
		fmt.Fprintf(h, "%s/%s/%s;", c.crd.UID, c.crd.ResourceVersion, c.version)
	}
	return fmt.Sprintf("%X", h.Sum(nil))[:32]
}

func writeJSON(w http.ResponseWriter, r *http.Request, obj any) {
	b, err := json.Marshal(obj)
	if err != nil {
		fail(w, r, apierrors.NewInternalError(err))
		return
	}
	write(w, b)
}

func write(w http.ResponseWriter, b []byte) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(b)
}

// fail answers with err as a Status, as kube-apiserver does.
func fail(w http.ResponseWriter, r *http.Request, err error) {
	responsewriters.ErrorNegotiated(err, builtinapi.Codecs, schema.GroupVersion{}, w, r)
}
