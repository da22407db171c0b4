package typeconverter

import (
	"fmt"
	"path"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/apiserver/pkg/admission"
	genericapi "k8s.io/apiserver/pkg/endpoints"
	"k8s.io/apiserver/pkg/registry/rest"
	genericapiserver "k8s.io/apiserver/pkg/server"
)

// Settings are the generic server's settings a group's handlers are built
// with (the server keeps them private): they must be the ones its config
// was completed with.
type Settings struct {
	Admission           admission.Interface
	MinRequestTimeout   time.Duration
	MaxRequestBodyBytes int64
}

// Reinstall serves the resources of a group the generic server has
// already installed (InstallAPIGroup or InstallLegacyAPIGroup under
// apiPrefix) again, with the same storage and settings but the
// Unstructured type converter. Only each version's resource routes are
// replaced; discovery, aggregated discovery, OpenAPI and storage readiness
// stay what the generic server registered. It must run before the server
// serves.
func Reinstall(s *genericapiserver.GenericAPIServer, info *genericapiserver.APIGroupInfo, apiPrefix string, settings Settings) error {
	if info.StaticOpenAPISpec == nil {
		return fmt.Errorf("group %v is not installed yet", info.PrioritizedVersions)
	}
	// The same spec the generic server built the group's converter from.
	stock, err := managedfields.NewTypeConverter(info.StaticOpenAPISpec, false)
	if err != nil {
		return err
	}
	converter := Unstructured(stock)
	container := s.Handler.GoRestfulContainer
	for _, gv := range info.PrioritizedVersions {
		resources := info.VersionedResourcesStorageMap[gv.Version]
		if len(resources) == 0 {
			continue
		}
		root := path.Join(apiPrefix, gv.Group, gv.Version)
		installed := false
		for _, ws := range container.RegisteredWebServices() {
			if ws.RootPath() == root {
				if err := container.Remove(ws); err != nil {
					return fmt.Errorf("replacing %s: %w", root, err)
				}
				installed = true
				break
			}
		}
		if !installed {
			return fmt.Errorf("%s is not installed", root)
		}
		storage := make(map[string]rest.Storage, len(resources))
		for name, st := range resources {
			storage[name] = st
		}
		version := &genericapi.APIGroupVersion{
			Root:                        apiPrefix,
			Storage:                     storage,
			GroupVersion:                gv,
			AllServedVersionsByResource: servedVersions(info, gv.Group),
			OptionsExternalVersion:      info.OptionsExternalVersion,
			MetaGroupVersion:            info.MetaGroupVersion,
			ParameterCodec:              info.ParameterCodec,
			Serializer:                  info.NegotiatedSerializer,
			Creater:                     info.Scheme,
			Convertor:                   info.Scheme,
			ConvertabilityChecker:       info.Scheme,
			UnsafeConvertor:             runtime.UnsafeObjectConvertor(info.Scheme),
			Defaulter:                   info.Scheme,
			Typer:                       info.Scheme,
			Namer:                       runtime.Namer(meta.NewAccessor()),
			TypeConverter:               converter,
			EquivalentResourceRegistry:  s.EquivalentResourceRegistry,
			Authorizer:                  s.Authorizer,
			Admit:                       settings.Admission,
			MinRequestTimeout:           settings.MinRequestTimeout,
			MaxRequestBodyBytes:         settings.MaxRequestBodyBytes,
		}
		if _, _, err := version.InstallREST(container); err != nil {
			return fmt.Errorf("serving %s: %w", root, err)
		}
	}
	return nil
}

// servedVersions is, for each resource of the group, the versions serving
// it, as the generic server lists them.
func servedVersions(info *genericapiserver.APIGroupInfo, group string) map[string][]string {
	out := map[string][]string{}
	for version, resources := range info.VersionedResourcesStorageMap {
		for resource := range resources {
			v := version
			if group != "" {
				v = group + "/" + version
			}
			out[resource] = append(out[resource], v)
		}
	}
	return out
}
