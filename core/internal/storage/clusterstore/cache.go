package clusterstore

import (
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/storage"
	cacherstorage "k8s.io/apiserver/pkg/storage/cacher"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/apiserver/pkg/storage/storagebackend/factory"
	"k8s.io/client-go/tools/cache"

	"github.com/meshplane/meshplane/core/internal/clusters"
)

// CachedDecorator is Decorator with one watch cache per resource, shared by
// all clusters: the cache holds every cluster's objects, keyed with their
// cluster (from the kcp.io/cluster annotation), so a cluster's list is a
// key range of the cache and a wildcard list is all of it. Use it for
// resources whose schema is the same in every cluster.
func (b *Backend) CachedDecorator(
	config *storagebackend.ConfigForResource,
	resourcePrefix string,
	keyFunc func(obj runtime.Object) (string, error),
	newFunc func() runtime.Object,
	newListFunc func() runtime.Object,
	getAttrsFunc storage.AttrFunc,
	trigger storage.IndexerFuncs,
	indexers *cache.Indexers,
) (storage.Interface, factory.DestroyFunc, error) {
	raw, err := b.NewStore(config, newFunc, newListFunc, resourcePrefix)
	if err != nil {
		return nil, nil, err
	}
	prefix := "/" + trimSlashes(resourcePrefix)
	cacher, err := cacherstorage.NewCacherFromConfig(cacherstorage.Config{
		Storage:             nudgingStorage{Interface: raw, nudger: b.nudger},
		Versioner:           storage.APIObjectVersioner{},
		GroupResource:       config.GroupResource,
		EventsHistoryWindow: eventsHistoryWindow,
		ResourcePrefix:      prefix,
		KeyFunc:             clusterKeyFunc(prefix),
		NewFunc:             newFunc,
		NewListFunc:         newListFunc,
		GetAttrsFunc:        getAttrsFunc,
		IndexerFuncs:        trigger,
		Indexers:            indexers,
		Codec:               config.Codec,
	})
	if err != nil {
		return nil, nil, fmt.Errorf("watch cache for %s: %w", config.GroupResource, err)
	}
	delegator := cacherstorage.NewCacheDelegator(cacher, raw)
	var once sync.Once
	return NewForResource(delegator, resourcePrefix, config.GroupResource), func() {
		once.Do(func() {
			delegator.Stop()
			cacher.Stop()
		})
	}, nil
}

// eventsHistoryWindow is how far back watches can resume from the cache.
const eventsHistoryWindow = 75 * time.Second

// clusterKeyFunc keys an object as the partitioned store places it:
// <prefix>/<cluster>/[<namespace>/]<name>.
func clusterKeyFunc(prefix string) func(obj runtime.Object) (string, error) {
	return func(obj runtime.Object) (string, error) {
		m, err := meta.Accessor(obj)
		if err != nil {
			return "", err
		}
		cluster := m.GetAnnotations()[clusters.Annotation]
		if cluster == "" {
			return "", fmt.Errorf("object %s/%s has no %s annotation", m.GetNamespace(), m.GetName(), clusters.Annotation)
		}
		if ns := m.GetNamespace(); ns != "" {
			return prefix + "/" + cluster + "/" + ns + "/" + m.GetName(), nil
		}
		return prefix + "/" + cluster + "/" + m.GetName(), nil
	}
}
