// Package workspaceauth is kcp's per-workspace-type authentication: a
// WorkspaceType lists WorkspaceAuthenticationConfigurations of its own
// logical cluster (spec.authenticationConfigurations), and a bearer JWT of
// one of their issuers authenticates requests to the logical clusters of
// that type, and nowhere else.
//
// The type may live on another shard: its lookup (TypeGetter) and the
// configuration sources given to Start include the replicas of the other
// shards. Everything comes from informers: one JWT authenticator per
// configuration, built when the configuration is added or changed and
// stopped when it goes; per type, the union of its configurations'
// authenticators, kept until the type or a configuration changes. A
// request reads only memory.
package workspaceauth

import (
	"context"
	"strings"
	"sync"

	kcpcache "github.com/kcp-dev/apimachinery/v2/pkg/cache"
	corev1alpha1 "github.com/kcp-dev/sdk/apis/core/v1alpha1"
	tenancyv1alpha1 "github.com/kcp-dev/sdk/apis/tenancy/v1alpha1"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	tokenunion "k8s.io/apiserver/pkg/authentication/token/union"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/meshplane/meshplane/core/internal/authentication/jwt"
	"github.com/meshplane/meshplane/core/internal/clusters"
)

// TypeAnnotation on a LogicalCluster holds <path>:<name> of its type.
const TypeAnnotation = "internal.tenancy.kcp.io/type"

// Clusters finds logical clusters (the tenancy index).
type Clusters interface {
	Get(cluster string) (*corev1alpha1.LogicalCluster, bool)
	Resolve(pathOrName string) (string, bool)
}

// TypeGetter returns the WorkspaceType name of a logical cluster.
type TypeGetter func(cluster, name string) (*tenancyv1alpha1.WorkspaceType, bool)

// FromIndexer is a TypeGetter reading a WorkspaceType informer's store.
func FromIndexer(types cache.Indexer) TypeGetter {
	return func(cluster, name string) (*tenancyv1alpha1.WorkspaceType, bool) {
		obj, ok, _ := types.GetByKey(kcpcache.ToClusterAwareKey(cluster, "", name))
		if !ok {
			return nil, false
		}
		wt, ok := obj.(*tenancyv1alpha1.WorkspaceType)
		return wt, ok
	}
}

// EventSource gives the events of WorkspaceAuthenticationConfigurations
// (an informer, or the other shards' replica).
type EventSource interface {
	AddEventHandler(cache.ResourceEventHandler) (cache.ResourceEventHandlerRegistration, error)
}

type configKey struct{ cluster, name string }

type built struct {
	resourceVersion string
	authn           *jwt.Authenticator // nil when the configuration is invalid
}

type typeAuth struct {
	resourceVersion string
	generation      uint64
	authn           authenticator.Token // nil: the type has no usable configuration
}

// Index authenticates bearer JWTs with the configurations of the
// request's logical cluster's type. It implements authenticator.Token;
// the logical cluster comes from the request context.
type Index struct {
	clusters Clusters
	types    TypeGetter
	opts     jwt.Options

	mu         sync.RWMutex
	ctx        context.Context
	configs    map[configKey]*built
	generation uint64 // counts configuration changes
	byType     map[configKey]*typeAuth
}

// New returns an Index reading WorkspaceTypes with types; Start feeds it
// the configurations.
func New(clusters Clusters, types TypeGetter, opts jwt.Options) *Index {
	return &Index{clusters: clusters, types: types, opts: opts, configs: map[configKey]*built{}, byType: map[configKey]*typeAuth{}}
}

// Start follows the configuration sources (keyed by their objects'
// logical cluster, so sources of different shards do not meet);
// authenticators run until ctx ends.
func (i *Index) Start(ctx context.Context, sources ...EventSource) error {
	i.mu.Lock()
	i.ctx = ctx
	i.mu.Unlock()
	for _, src := range sources {
		if _, err := src.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    func(obj any) { i.set(obj, false) },
			UpdateFunc: func(_, obj any) { i.set(obj, false) },
			DeleteFunc: func(obj any) {
				if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
					obj = t.Obj
				}
				i.set(obj, true)
			},
		}); err != nil {
			return err
		}
	}
	return nil
}

// set builds, replaces or stops the authenticator of a configuration.
func (i *Index) set(obj any, deleted bool) {
	wac, ok := obj.(*tenancyv1alpha1.WorkspaceAuthenticationConfiguration)
	if !ok {
		return
	}
	key := configKey{wac.Annotations[clusters.Annotation], wac.Name}
	logger := klog.FromContext(i.ctx).WithValues("cluster", key.cluster, "name", key.name)
	i.mu.RLock()
	old := i.configs[key]
	i.mu.RUnlock()
	if !deleted && old != nil && old.resourceVersion == wac.ResourceVersion {
		return
	}
	var b *built
	if !deleted {
		b = &built{resourceVersion: wac.ResourceVersion}
		c := convert(wac)
		if err := jwt.Validate(c, i.opts.DisallowedIssuers); err != nil {
			logger.Error(err, "WorkspaceAuthenticationConfiguration is not usable")
		} else if a, err := jwt.New(i.ctx, c.JWT, i.opts); err != nil {
			logger.Error(err, "Building the authenticators of a WorkspaceAuthenticationConfiguration")
		} else {
			b.authn = a
		}
	}
	i.mu.Lock()
	if deleted {
		delete(i.configs, key)
	} else {
		i.configs[key] = b
	}
	i.generation++
	i.mu.Unlock()
	if old != nil && old.authn != nil {
		old.authn.Stop()
	}
}

// AuthenticateToken authenticates token for the logical cluster of ctx
// with the issuers of that cluster's type.
func (i *Index) AuthenticateToken(ctx context.Context, token string) (*authenticator.Response, bool, error) {
	cluster, ok := clusters.From(ctx)
	if !ok {
		return nil, false, nil
	}
	a := i.forCluster(cluster)
	if a == nil {
		return nil, false, nil
	}
	resp, ok, err := a.AuthenticateToken(ctx, token)
	if !ok || err != nil {
		return nil, false, err
	}
	u, err := scope(resp.User, cluster)
	if err != nil {
		return nil, false, err
	}
	return &authenticator.Response{User: u, Audiences: resp.Audiences}, true, nil
}

// forCluster is the authenticator of a logical cluster's type, nil when
// the type lists no usable configuration.
func (i *Index) forCluster(cluster string) authenticator.Token {
	lc, ok := i.clusters.Get(cluster)
	if !ok {
		return nil
	}
	typeID := lc.Annotations[TypeAnnotation]
	sep := strings.LastIndex(typeID, ":")
	if sep <= 0 {
		return nil
	}
	typeCluster, ok := i.clusters.Resolve(typeID[:sep])
	if !ok {
		return nil
	}
	wt, ok := i.types(typeCluster, typeID[sep+1:])
	if !ok || len(wt.Spec.AuthenticationConfigurations) == 0 {
		return nil
	}
	key := configKey{typeCluster, wt.Name}
	i.mu.RLock()
	t, gen := i.byType[key], i.generation
	i.mu.RUnlock()
	if t != nil && t.resourceVersion == wt.ResourceVersion && t.generation == gen {
		return t.authn
	}
	return i.rebuild(key, wt)
}

// rebuild makes the union of a type's configurations' authenticators.
func (i *Index) rebuild(key configKey, wt *tenancyv1alpha1.WorkspaceType) authenticator.Token {
	i.mu.Lock()
	defer i.mu.Unlock()
	var tokens []authenticator.Token
	for _, ref := range wt.Spec.AuthenticationConfigurations {
		if b := i.configs[configKey{key.cluster, ref.Name}]; b != nil && b.authn != nil {
			tokens = append(tokens, b.authn)
		}
	}
	t := &typeAuth{resourceVersion: wt.ResourceVersion, generation: i.generation}
	if len(tokens) > 0 {
		t.authn = tokenunion.New(tokens...)
	}
	i.byType[key] = t
	return t.authn
}
