package clusterspec

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/controller/openapi/builder"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/kube-openapi/pkg/spec3"
)

// coreGV is the OpenAPI v3 group version of the core group: kinds of it
// bound from an export (services) join the built-in document there.
const coreGV = "api/v1"

// coreCRDs returns the established bound resources of the core group
// served in v1.
func coreCRDs(all []*apiextensionsv1.CustomResourceDefinition) []crdVersion {
	var out []crdVersion
	for _, crd := range all {
		if crd.Spec.Group != "" || crd.Status.AcceptedNames.Plural == "" || !isEstablished(crd) {
			continue
		}
		for _, v := range crd.Spec.Versions {
			if v.Served && v.Name == "v1" {
				out = append(out, crdVersion{crd: crd, version: v.Name})
			}
		}
	}
	return sortedByName(out)
}

func isEstablished(crd *apiextensionsv1.CustomResourceDefinition) bool {
	for _, c := range crd.Status.Conditions {
		if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
			return true
		}
	}
	return false
}

// coreIndexURL is the index's URL of api/v1 with bound kinds: its hash
// changes with the built-in document's and with the kinds.
func coreIndexURL(static string, crds []crdVersion) string {
	hash := hashOf(crds)
	if u, err := url.Parse(static); err == nil && u.Query().Get("hash") != "" {
		hash = u.Query().Get("hash") + "-" + hash
	}
	return "/openapi/v3/" + coreGV + "?hash=" + hash
}

// serveCoreV3 serves api/v1: the built-in document with the bound kinds'.
func (h *Handler) serveCoreV3(w http.ResponseWriter, r *http.Request, crds []crdVersion) {
	h.coreOnce.Do(func() {
		h.staticCore = &spec3.OpenAPI{}
		h.staticCoreErr = scrape(h.Static, "/openapi/v3/"+coreGV, h.staticCore)
	})
	if h.staticCoreErr != nil {
		fail(w, r, apierrors.NewInternalError(h.staticCoreErr))
		return
	}
	key := ""
	if cacheable(crds) {
		key = coreGV + "?" + hashOf(crds)
		if b, ok := h.v3Cache.Get(key); ok {
			write(w, b.([]byte))
			return
		}
	}
	specs := []*spec3.OpenAPI{h.staticCore}
	for _, c := range crds {
		s, err := builder.BuildOpenAPIV3(c.crd, c.version, builder.Options{})
		if err != nil {
			fail(w, r, apierrors.NewInternalError(fmt.Errorf("building OpenAPI of %s: %w", c.crd.Name, err)))
			return
		}
		// The builder knows /apis/<group>/<version> paths only.
		if s.Paths != nil {
			paths := make(map[string]*spec3.Path, len(s.Paths.Paths))
			for p, item := range s.Paths.Paths {
				paths["/api/v1/"+strings.TrimPrefix(p, "/apis//v1/")] = item
			}
			s.Paths.Paths = paths
		}
		specs = append(specs, s)
	}
	merged, err := builder.MergeSpecsV3(specs...)
	if err != nil {
		fail(w, r, apierrors.NewInternalError(fmt.Errorf("merging OpenAPI of %s: %w", coreGV, err)))
		return
	}
	b, err := json.Marshal(merged)
	if err != nil {
		fail(w, r, apierrors.NewInternalError(fmt.Errorf("encoding OpenAPI of %s: %w", coreGV, err)))
		return
	}
	if key != "" {
		h.v3Cache.Add(key, b)
	}
	write(w, b)
}
