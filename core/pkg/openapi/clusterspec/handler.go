// Package clusterspec serves OpenAPI v2 and v3 per logical cluster: the
// built-in definitions every cluster shares, plus the cluster's own CRDs.
package clusterspec

import (
	"crypto/sha512"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/controller/openapi/builder"
	"k8s.io/kube-openapi/pkg/spec3"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/meshplane/meshplane/core/pkg/clusters"
)

// CRDLister lists a cluster's CRDs.
type CRDLister interface {
	List(cluster string) []*apiextensionsv1.CustomResourceDefinition
}

// Handler answers /openapi/v2 and /openapi/v3 for the request's cluster.
type Handler struct {
	CRDs CRDLister
	// Static serves the built-in OpenAPI documents.
	Static http.Handler
	Next   http.Handler

	v2once   sync.Once
	staticV2 *spec.Swagger
}

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
	switch {
	case p == "/openapi/v3":
		h.serveV3Index(w, r, cluster)
	case strings.HasPrefix(p, "/openapi/v3/apis/"):
		gv := strings.TrimPrefix(p, "/openapi/v3/")
		if crds := crdsOf(h.CRDs.List(cluster), gv); len(crds) > 0 {
			h.serveV3GroupVersion(w, gv, crds)
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
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, "/openapi/v3", nil)
	req.Header.Set("Accept", "application/json")
	h.Static.ServeHTTP(rec, req)
	var index v3Index
	if err := json.Unmarshal(rec.Body.Bytes(), &index); err != nil || index.Paths == nil {
		index.Paths = map[string]v3Path{}
	}
	prefix := "/clusters/" + cluster
	for k, v := range index.Paths {
		index.Paths[k] = v3Path{ServerRelativeURL: prefix + v.ServerRelativeURL}
	}
	all := h.CRDs.List(cluster)
	for _, gv := range groupVersions(all) {
		index.Paths[gv] = v3Path{ServerRelativeURL: prefix + "/openapi/v3/" + gv + "?hash=" + hashOf(crdsOf(all, gv))}
	}
	writeJSON(w, index)
}

func (h *Handler) serveV3GroupVersion(w http.ResponseWriter, gv string, crds []crdVersion) {
	var specs []*spec3.OpenAPI
	for _, c := range crds {
		s, err := builder.BuildOpenAPIV3(c.crd, c.version, builder.Options{})
		if err != nil {
			http.Error(w, fmt.Sprintf("building OpenAPI of %s: %v", c.crd.Name, err), http.StatusInternalServerError)
			return
		}
		specs = append(specs, s)
	}
	merged, err := builder.MergeSpecsV3(specs...)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	writeJSON(w, merged)
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
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodGet, "/openapi/v2", nil)
		req.Header.Set("Accept", "application/json")
		h.Static.ServeHTTP(rec, req)
		s := &spec.Swagger{}
		if err := json.Unmarshal(rec.Body.Bytes(), s); err == nil {
			h.staticV2 = s
		}
	})
	if h.staticV2 == nil {
		h.Next.ServeHTTP(w, r)
		return
	}
	var crdSpecs []*spec.Swagger
	for _, crd := range established(all) {
		for _, v := range crd.Spec.Versions {
			if !v.Served {
				continue
			}
			s, err := builder.BuildOpenAPIV2(crd, v.Name, builder.Options{V2: true, StripValueValidation: true, StripNullable: true, AllowNonStructural: true})
			if err == nil {
				crdSpecs = append(crdSpecs, s)
			}
		}
	}
	merged, err := builder.MergeSpecs(h.staticV2, crdSpecs...)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	writeJSON(w, merged)
}

type crdVersion struct {
	crd     *apiextensionsv1.CustomResourceDefinition
	version string
}

func established(in []*apiextensionsv1.CustomResourceDefinition) []*apiextensionsv1.CustomResourceDefinition {
	var out []*apiextensionsv1.CustomResourceDefinition
	for _, crd := range in {
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

func writeJSON(w http.ResponseWriter, obj any) {
	b, err := json.Marshal(obj)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(b)
}
