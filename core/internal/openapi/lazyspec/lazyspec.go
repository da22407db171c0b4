// Package lazyspec serves the server's own OpenAPI documents, /openapi/v2
// and /openapi/v3/<group version>, as kube's generic server does (its
// routes.OpenAPI InstallV2 and InstallV3), but builds each document on its
// first request instead of at start. Built, the v2 document and the v3
// documents hold about 8 MiB of heap; an idle server, and most servers
// most of their life, are never asked for them. Set the generic config's
// SkipOpenAPIInstallation and call Install once every group is installed.
package lazyspec

import (
	"fmt"
	"maps"
	"strings"
	"sync"

	restful "github.com/emicklei/go-restful/v3"
	"k8s.io/apiserver/pkg/server/mux"
	builder2 "k8s.io/kube-openapi/pkg/builder"
	"k8s.io/kube-openapi/pkg/builder3"
	"k8s.io/kube-openapi/pkg/cached"
	"k8s.io/kube-openapi/pkg/common"
	"k8s.io/kube-openapi/pkg/common/restfuladapter"
	"k8s.io/kube-openapi/pkg/handler"
	"k8s.io/kube-openapi/pkg/handler3"
	"k8s.io/kube-openapi/pkg/spec3"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// etag names the documents' one version: they never change once the
// server runs (the handlers compute the HTTP ETag from the content).
const etag = "static"

// Install registers /openapi/v2 (with v2, if not nil) and /openapi/v3
// (with v3, if not nil) on m, for the web services of c.
//
// It also lets go of the definitions DefaultOpenAPIV3Config computes
// eagerly (every generated model, about 2.4 MiB of heap, read by the
// generic server's group installs and by nothing after them): v3's
// GetDefinitions is called instead, once, on the first v3 document built.
// v3 must come from DefaultOpenAPIV3Config, after the groups' installs.
func Install(c *restful.Container, m *mux.PathRecorderMux, v2 *common.Config, v3 *common.OpenAPIV3Config) error {
	if v3 != nil && v3.GetDefinitions != nil {
		v3.Definitions = nil
		v3.GetDefinitions = once(v3.GetDefinitions)
	}
	if v3 != nil && v3.GetOperationIDAndTags != nil {
		// builder3's first build (a group install) derived this from
		// GetOperationIDAndTags with a closure over the whole builder,
		// whose definitions and spec it kept alive; the same mapping,
		// without the builder.
		v3.GetOperationIDAndTagsFromRoute = operationIDAndTags(v3.GetOperationIDAndTags)
	}
	if v2 != nil {
		doc := cached.Once(cached.Func(func() (*spec.Swagger, string, error) {
			s, err := builder2.BuildOpenAPISpecFromRoutes(restfuladapter.AdaptWebServices(c.RegisteredWebServices()), v2)
			if err != nil {
				return nil, "", fmt.Errorf("building the OpenAPI v2 document: %w", err)
			}
			s.Definitions = handler.PruneDefaults(s.Definitions)
			return s, etag, nil
		}))
		handler.NewOpenAPIServiceLazy(doc).RegisterOpenAPIVersionedService("/openapi/v2", m)
	}
	if v3 != nil {
		// The group documents, built concurrently for the first /openapi/v3
		// index, are built one at a time (builder3's state per build is
		// its own, but not the definitions' nested schemas; see once).
		var building sync.Mutex
		service := handler3.NewOpenAPIService()
		if err := service.RegisterOpenAPIV3VersionedService("/openapi/v3", m); err != nil {
			return fmt.Errorf("registering /openapi/v3: %w", err)
		}
		for _, ws := range c.RegisteredWebServices() {
			gv := strings.TrimPrefix(ws.RootPath(), "/")
			service.UpdateGroupVersionLazy(gv, cached.Once(cached.Func(func() (*spec3.OpenAPI, string, error) {
				building.Lock()
				defer building.Unlock()
				s, err := builder3.BuildOpenAPISpecFromRoutes(restfuladapter.AdaptWebServices([]*restful.WebService{ws}), v3)
				if err != nil {
					return nil, "", fmt.Errorf("building the OpenAPI v3 document of %s: %w", gv, err)
				}
				if group, version, ok := groupVersion(gv); ok {
					narrowMetaKinds(s, group, version)
				}
				return s, etag, nil
			})))
		}
	}
	return nil
}

// operationIDAndTags reads a route's operation ID and tags with get, as
// builder3 does for a config that sets GetOperationIDAndTags.
func operationIDAndTags(get func(*restful.Route) (string, []string, error)) func(common.Route) (string, []string, error) {
	return func(r common.Route) (string, []string, error) {
		route, ok := r.(*restfuladapter.RouteAdapter)
		if !ok {
			return "", nil, fmt.Errorf("route %s %s is not a go-restful route", r.Method(), r.Path())
		}
		return get(route.Route)
	}
}

// once returns get's first result on every call. The builders pass the
// same reference callback every time (the config's definition namer under
// #/components/schemas/), so the first result stands for all.
//
// Each call gets its own extension maps: builder3 writes into and deletes
// from a definition's extensions, and the documents it built share them,
// so a build must never touch a map a built document holds (the handler
// encodes those without any lock: "concurrent map iteration and map
// write" crashed the server).
func once(get common.GetOpenAPIDefinitions) common.GetOpenAPIDefinitions {
	var (
		mu   sync.Mutex
		defs map[string]common.OpenAPIDefinition
	)
	return func(ref common.ReferenceCallback) map[string]common.OpenAPIDefinition {
		mu.Lock()
		defer mu.Unlock()
		if defs == nil {
			defs = get(ref)
		}
		return ownExtensions(defs)
	}
}

// ownExtensions copies defs with a copy of each definition's extension map
// (the rest is only read).
func ownExtensions(defs map[string]common.OpenAPIDefinition) map[string]common.OpenAPIDefinition {
	out := make(map[string]common.OpenAPIDefinition, len(defs))
	for name, d := range defs {
		if d.Schema.Extensions != nil {
			d.Schema.Extensions = maps.Clone(d.Schema.Extensions)
		}
		out[name] = d
	}
	return out
}

// groupVersion splits "api/v1" and "apis/<group>/<version>".
func groupVersion(path string) (group, version string, ok bool) {
	parts := strings.Split(path, "/")
	switch {
	case len(parts) == 2 && parts[0] == "api":
		return "", parts[1], true
	case len(parts) == 3 && parts[0] == "apis":
		return parts[1], parts[2], true
	}
	return "", "", false
}

// metaKinds are registered into every group (by metav1.AddToGroupVersion).
var metaKinds = map[string]bool{"WatchEvent": true, "DeleteOptions": true}

// narrowMetaKinds keeps, as kube-apiserver does in each group version's
// document, only this group version's and core/v1's entries in the
// x-kubernetes-group-version-kind of the kinds every group registers
// (otherwise each document lists them for every group).
func narrowMetaKinds(s *spec3.OpenAPI, group, version string) {
	if s == nil || s.Components == nil {
		return
	}
	const ext = "x-kubernetes-group-version-kind"
	for _, schema := range s.Components.Schemas {
		if schema == nil {
			continue
		}
		gvks, ok := schema.Extensions[ext].([]any)
		if !ok || len(gvks) <= 1 {
			continue
		}
		if first, ok := gvks[0].(map[string]any); !ok || !metaKinds[fmt.Sprint(first["kind"])] {
			continue
		}
		var kept []any
		for _, item := range gvks {
			m, ok := item.(map[string]any)
			if !ok {
				continue
			}
			g, gok := m["group"].(string)
			v, vok := m["version"].(string)
			if gok && vok && ((g == group && v == version) || (g == "" && v == "v1")) {
				kept = append(kept, item)
			}
		}
		if len(kept) > 0 {
			schema.Extensions[ext] = kept
		} else {
			delete(schema.Extensions, ext)
		}
	}
}
