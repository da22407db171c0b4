package server

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	apisv1alpha1 "github.com/kcp-dev/sdk/apis/apis/v1alpha1"
	corev1alpha1 "github.com/kcp-dev/sdk/apis/core/v1alpha1"
	tenancyv1alpha1 "github.com/kcp-dev/sdk/apis/tenancy/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"

	"github.com/meshplane/meshplane/core/internal/authorization"
	"github.com/meshplane/meshplane/core/internal/cacheserver"
	"github.com/meshplane/meshplane/core/internal/clusters"
	apiexportcontroller "github.com/meshplane/meshplane/core/internal/controllers/apiexport"
	"github.com/meshplane/meshplane/core/internal/registry/wildcard"
	"github.com/meshplane/meshplane/core/internal/server/options"
	"github.com/meshplane/meshplane/core/internal/sharding"
	"github.com/meshplane/meshplane/core/internal/tenancy"
)

// shardParts: this server as one shard of an install.
type shardParts struct {
	shards *sharding.Shards
	// root holds the Shards: in process on the root shard, the root
	// shard's API on the others.
	root interface {
		Get(ctx context.Context, cluster, namespace, name string) (*corev1alpha1.Shard, error)
	}
	register func(ctx context.Context) error
	// writer writes this shard's shared objects to the cache server
	// (--replica-source=cache).
	writer *sharding.Writer
	// cache is the cache server the root shard embeds.
	cache *cacheserver.Handler
}

func (p *parts) isRootShard() bool { return p.config.Options.ShardName == sharding.RootShard }

// newSharding builds the view of the other shards. The root shard lists
// Shards in process and reaches the others with the shard admin's token
// and its CA (shards of an install share both); another shard does all
// of it through --root-shard-kubeconfig.
func (p *parts) newSharding() error {
	opts := p.config.Options
	spec := corev1alpha1.ShardSpec{BaseURL: opts.ShardBaseURL, ExternalURL: opts.ShardExternalURL, VirtualWorkspaceURL: opts.ShardBaseURL}
	s := &sharding.Shards{Self: opts.ShardName,
		LocalCount: func() int { return len(p.index.Informer().GetStore().ListKeys()) },
		Holds: func(cluster string) bool {
			_, ok := p.index.Get(cluster)
			return ok
		}}
	p.sharding = &shardParts{shards: s}
	if p.isRootShard() {
		s.List = func(ctx context.Context) ([]corev1alpha1.Shard, error) {
			obj, err := p.reg.shards.List(ctx, clusters.Root, "", nil)
			if err != nil {
				return nil, err
			}
			return shardItems(obj)
		}
		s.Remote = sharding.Unthrottled(&rest.Config{BearerToken: p.config.Tokens.ShardAdmin, TLSClientConfig: rest.TLSClientConfig{CAFile: p.config.CAFile}})
		p.sharding.register = func(ctx context.Context) error {
			return tenancy.RegisterShard(ctx, p.reg.shards, opts.ShardName, spec)
		}
		p.types.Elsewhere = p.typesElsewhere
		return p.useCacheServer(opts.ShardBaseURL)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", opts.RootShardKubeconfig)
	if err != nil {
		return fmt.Errorf("--root-shard-kubeconfig: %w", err)
	}
	s.Remote = sharding.Unthrottled(cfg)
	if err := p.useCacheServer(cfg.Host); err != nil {
		return err
	}
	rootShards, err := sharding.NewRemote(cfg, corev1alpha1.SchemeGroupVersion.WithResource("shards"), func() *corev1alpha1.Shard { return &corev1alpha1.Shard{} })
	if err != nil {
		return err
	}
	s.List = func(ctx context.Context) ([]corev1alpha1.Shard, error) {
		obj, err := rootShards.List(ctx, clusters.Root, "", nil)
		if err != nil {
			return nil, err
		}
		return shardItems(obj)
	}
	p.types.Elsewhere = p.typesElsewhere
	p.sharding.register = func(ctx context.Context) error {
		// The root shard may start after this one: retry for a while.
		log := klog.FromContext(ctx)
		return wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 5*time.Minute, true, func(ctx context.Context) (bool, error) {
			if err := tenancy.RegisterShard(ctx, rootShards, opts.ShardName, spec); err != nil {
				log.Info("Cannot register the shard in root yet", "err", err.Error())
				return false, nil
			}
			return true, nil
		})
	}
	return nil
}

// useCacheServer makes the shard read the other shards from the cache
// server with --replica-source=cache: the one of --cache-server-kubeconfig,
// else the one the root shard (at rootURL) embeds, with the credentials
// for other shards.
func (p *parts) useCacheServer(rootURL string) error {
	opts := p.config.Options
	if opts.ReplicaSource != options.ReplicaSourceCache {
		return nil
	}
	s := p.sharding.shards
	cfg := rest.CopyConfig(s.Remote)
	cfg.Host = strings.TrimSuffix(rootURL, "/") + cacheserver.PathPrefix
	if opts.CacheServerKubeconfig != "" {
		c, err := clientcmd.BuildConfigFromFlags("", opts.CacheServerKubeconfig)
		if err != nil {
			return fmt.Errorf("--cache-server-kubeconfig: %w", err)
		}
		cfg = c
	}
	s.CacheServer = cfg
	s.ReplicaRBAC = authorization.NewBind(sharding.ReplicaRBAC{Others: s.Others()})
	return nil
}

// cacheWriter writes this shard's shared objects to the cache server
// (--replica-source=cache), from the shared informers.
func (p *parts) cacheWriter(inf informers) (*sharding.Writer, error) {
	local := map[schema.GroupVersionResource]cache.SharedIndexInformer{}
	for _, kind := range sharding.CacheKinds {
		st, ok := p.storage[kind.GVR.GroupVersion()][kind.GVR.Resource].(wildcard.Storage)
		if !ok {
			return nil, fmt.Errorf("no registry for %s", kind.GVR)
		}
		local[kind.GVR] = inf.of(st, kind.New())
	}
	s := p.sharding.shards
	return sharding.NewWriter(s.Self, s.CacheServer, local)
}

// withCacheServer serves the embedded cache server on the root shard
// (kcp's default): the shards' replicas in this shard's etcd under their
// own key prefix, at /services/cache, to shards only.
func (p *parts) withCacheServer(next http.Handler, c *genericapiserver.Config) http.Handler {
	if !p.isRootShard() {
		return next
	}
	h := &cacheserver.Handler{Client: p.backend.Client(), Prefix: cacheKeyPrefix, Resources: sharding.CacheResources()}
	p.sharding.cache = h
	limited := cacheserver.WithInFlightLimit(h, c.MaxRequestsInFlight, c.MaxMutatingRequestsInFlight)
	return cacheserver.WithCacheServer(next, limited, c.Authentication.Authenticator)
}

// cacheSweepInterval is how often the root shard looks for copies of
// shards that left (deleted at the second look that misses them).
const cacheSweepInterval = 30 * time.Second

// cacheKeyPrefix is the etcd key prefix of the embedded cache server,
// apart from the shard's own objects (under /registry).
const cacheKeyPrefix = "/meshplane-cache/"

// typesElsewhere reads a WorkspaceType of a workspace on another shard
// (found by walking the tree from root) when there is more than one
// shard.
func (p *parts) typesElsewhere(ctx context.Context, path, name string) (*tenancyv1alpha1.WorkspaceType, error) {
	s := p.sharding.shards
	// The replica first; a type made a moment ago is read where it is.
	if cluster, _, ok := s.Others().Resolve(path); ok {
		if o, _, ok := s.Others().Get(sharding.WorkspaceTypes, cluster, name); ok {
			return o.DeepCopyObject().(*tenancyv1alpha1.WorkspaceType), nil
		}
	}
	if path == clusters.Root && !p.isRootShard() {
		// root's built-in types, the common case: one read on the root shard.
		return s.WorkspaceType(ctx, path, name)
	}
	all, err := s.List(ctx)
	if err != nil {
		return nil, err
	}
	if len(all) < 2 {
		return nil, apierrors.NewNotFound(tenancyv1alpha1.Resource("workspacetypes"), name)
	}
	return s.WorkspaceType(ctx, path, name)
}

// shardItems are the Shards of a list, typed or unstructured.
func shardItems(obj runtime.Object) ([]corev1alpha1.Shard, error) {
	items, err := meta.ExtractList(obj)
	if err != nil {
		return nil, err
	}
	out := make([]corev1alpha1.Shard, 0, len(items))
	for _, it := range items {
		switch o := it.(type) {
		case *corev1alpha1.Shard:
			out = append(out, *o)
		case *unstructured.Unstructured:
			var sh corev1alpha1.Shard
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &sh); err != nil {
				return nil, err
			}
			out = append(out, sh)
		default:
			return nil, fmt.Errorf("unexpected %T in a Shard list", it)
		}
	}
	return out, nil
}

// replicateOtherShards runs the replicas of the other shards (after the
// registration in root); on the root shard, a change of the Shards makes
// them look at once; another shard waits for their first sync.
func (p *parts) replicateOtherShards(ctx context.Context, inf informers) {
	others := p.sharding.shards.Others()
	if p.isRootShard() {
		shards := wildcard.NewInformer(p.reg.shards.Storage, &corev1alpha1.Shard{})
		_, _ = shards.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    func(any) { others.Changed() },
			UpdateFunc: func(any, any) { others.Changed() },
			DeleteFunc: func(any) { others.Changed() },
		})
		go shards.RunWithContext(ctx)
	}
	go others.Run(ctx)
	if w := p.sharding.writer; w != nil {
		go w.Run(ctx)
	}
	if p.isRootShard() {
		if h := p.sharding.cache; h != nil {
			sw := &cacheserver.Sweeper{Handler: h, Shards: func(ctx context.Context) (map[string]bool, error) {
				all, err := p.sharding.shards.List(ctx)
				if err != nil {
					return nil, err
				}
				names := map[string]bool{}
				for _, sh := range all {
					names[sh.Name] = true
				}
				return names, nil
			}}
			go sw.Run(ctx, cacheSweepInterval)
		}
		return
	}
	// Another shard is ready once it sees root's objects (exports to bind,
	// types): a bounded wait, root answered the registration already.
	wait, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if !cache.WaitForCacheSync(wait.Done(), others.HasSynced) {
		klog.FromContext(ctx).Info("The replicas of the other shards did not sync within a minute; serving anyway")
	}
}

// otherSlices are the endpoint slices of the other shards for the
// APIExport controller, which adds this shard's URL to them.
func (p *parts) otherSlices() *apiexportcontroller.Others {
	shards := p.sharding.shards
	others := shards.Others()
	return &apiexportcontroller.Others{
		Slices:  others.Source(sharding.EndpointSlices),
		Exports: others.Source(sharding.APIExports),
		List: func() []*apisv1alpha1.APIExportEndpointSlice {
			var out []*apisv1alpha1.APIExportEndpointSlice
			for _, objs := range others.List(sharding.EndpointSlices) {
				for _, o := range objs {
					out = append(out, o.(*apisv1alpha1.APIExportEndpointSlice))
				}
			}
			return out
		},
		Get: func(cluster, name string) (*apisv1alpha1.APIExportEndpointSlice, string, bool) {
			o, shard, ok := others.Get(sharding.EndpointSlices, cluster, name)
			if !ok {
				return nil, "", false
			}
			return o.(*apisv1alpha1.APIExportEndpointSlice), shard, true
		},
		UpdateStatus: func(ctx context.Context, shard, cluster string, s *apisv1alpha1.APIExportEndpointSlice) error {
			sh, err := shards.Get(ctx, shard)
			if err != nil {
				return err
			}
			c, err := shards.ClientsFor(sh.Spec.BaseURL)
			if err != nil {
				return err
			}
			_, err = c.Slices.UpdateStatus(ctx, cluster, "", s.Name, s)
			return err
		},
		Resolve: func(path string) (string, bool) {
			c, _, ok := others.Resolve(path)
			return c, ok
		},
	}
}
