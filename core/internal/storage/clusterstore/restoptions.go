package clusterstore

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/registry/generic"
	serverstorage "k8s.io/apiserver/pkg/server/storage"
	"k8s.io/apiserver/pkg/storage/storagebackend"
)

// RESTOptionsGetter hands registries storage on the shared backend, encoded
// in the preferred version of the resource's group.
type RESTOptionsGetter struct {
	Backend *Backend
	Scheme  *runtime.Scheme
	// Serializer provides the storage encoding; MediaType picks it
	// (application/vnd.kubernetes.protobuf for built-in kinds).
	Serializer runtime.StorageSerializer
	MediaType  string
	// MediaTypes overrides MediaType per group (kinds without protobuf).
	MediaTypes map[string]string
	// Prefixes overrides the storage prefix of a resource.
	Prefixes map[schema.GroupResource]string
	// StorageVersions overrides the stored version of a resource.
	StorageVersions map[schema.GroupResource]schema.GroupVersion
	// Cache puts a watch cache, shared by all clusters, in front of etcd.
	Cache bool
}

var _ generic.RESTOptionsGetter = &RESTOptionsGetter{}

// GetRESTOptions implements generic.RESTOptionsGetter.
func (g *RESTOptionsGetter) GetRESTOptions(resource schema.GroupResource, example runtime.Object) (generic.RESTOptions, error) {
	versions := g.Scheme.PrioritizedVersionsForGroup(resource.Group)
	if len(versions) == 0 {
		return generic.RESTOptions{}, fmt.Errorf("no version of group %q is registered", resource.Group)
	}
	storageVersion := versions[0]
	if v, ok := g.StorageVersions[resource]; ok {
		storageVersion = v
	}
	mediaType := g.MediaType
	if m, ok := g.MediaTypes[resource.Group]; ok {
		mediaType = m
	}
	codec, _, err := serverstorage.NewStorageCodec(serverstorage.StorageCodecConfig{
		StorageMediaType:  mediaType,
		StorageSerializer: g.Serializer,
		StorageVersion:    storageVersion,
		MemoryVersion:     schema.GroupVersion{Group: resource.Group, Version: runtime.APIVersionInternal},
	})
	if err != nil {
		return generic.RESTOptions{}, fmt.Errorf("storage codec for %s: %w", resource, err)
	}
	prefix := g.Prefixes[resource]
	if prefix == "" {
		prefix = resource.Resource
		if resource.Group != "" {
			prefix = resource.Group + "/" + resource.Resource
		}
	}
	decorator := g.Backend.Decorator
	if g.Cache {
		decorator = g.Backend.CachedDecorator
	}
	return generic.RESTOptions{
		StorageConfig: &storagebackend.ConfigForResource{
			Config:        storagebackend.Config{Codec: codec},
			GroupResource: resource,
		},
		Decorator:               decorator,
		DeleteCollectionWorkers: 1,
		// Deletes honour propagationPolicy (the foregroundDeletion and
		// orphan finalizers); the garbage collector acts on them.
		EnableGarbageCollection: true,
		ResourcePrefix:          "/" + prefix,
	}, nil
}
