// Package sharding lets one core be a shard among several: it knows the
// shard's own name, reaches the other shards (their spec.baseURL, with
// the credentials of the root shard's kubeconfig), picks the shard a new
// workspace lands on and registers a non-root shard in root.
//
// Controllers stay shard-unaware where they can: the workspace controller
// asks Pick for a shard and gets clients for it (ClientsFor); readers fall
// back to the replicas of the other shards' objects (Others,
// WithReplicas); permission checks in another shard's clusters are asked
// there (Authorizer). Requests are always sent to the shard's own API,
// never through a front proxy.
package sharding

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"

	apisv1alpha1 "github.com/kcp-dev/sdk/apis/apis/v1alpha1"
	corev1alpha1 "github.com/kcp-dev/sdk/apis/core/v1alpha1"
	tenancyv1alpha1 "github.com/kcp-dev/sdk/apis/tenancy/v1alpha1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/client-go/rest"

	"github.com/meshplane/meshplane/core/internal/authorization"
	"github.com/meshplane/meshplane/core/internal/reconciler/client"
)

// RootShard is the name of the shard that holds root.
const RootShard = "root"

// UnschedulableAnnotation on a Shard keeps new workspaces off it (kcp's
// key).
const UnschedulableAnnotation = "experimental.core.kcp.io/unschedulable"

// ShardLister lists the Shards in root.
type ShardLister func(ctx context.Context) ([]corev1alpha1.Shard, error)

// Shards is the view of the install from one shard.
type Shards struct {
	// Self is this shard's name.
	Self string
	// List lists the Shards (in process on the root shard, through the
	// root shard's API on the others).
	List ShardLister
	// Remote is the config for other shards: credentials and CA; the host
	// is replaced by a Shard's spec.baseURL.
	Remote *rest.Config
	// CacheServer, when set, is the cache server (its host ends in
	// /services/cache, with the shard admin's credentials): the replicas
	// of the other shards are read from it, one watch per kind, instead of
	// from each shard.
	CacheServer *rest.Config
	// ReplicaRBAC decides deep checks (bind, maximal permission policies)
	// in clusters whose RBAC the cache server replicates
	// (authorization.NewBind over ReplicaRBAC); nil asks the other shard.
	ReplicaRBAC authorizer.Authorizer

	mu      sync.Mutex
	clients map[string]*Clients
	others  *Others
	listed  lastList

	answersOnce sync.Once
	answerCache answerCache

	// LocalCount counts this shard's logical clusters (scheduling by
	// capacity); the others' come from their replicas.
	LocalCount func() int
	// Holds reports whether this shard holds a logical cluster.
	Holds func(cluster string) bool
	picks picks
}

// answers caches the other shards' answers to reviews (Authorizer).
func (s *Shards) answers() answerCache {
	s.answersOnce.Do(func() { s.answerCache = newAnswerCache(wallClock{}) })
	return s.answerCache
}

// Clients are the clients the workspace controller uses on a shard, and
// the readers Locate and WorkspaceType use there (nil for the local
// ones).
type Clients struct {
	LogicalClusters client.Client[*corev1alpha1.LogicalCluster]
	Bindings        client.Writer[*rbacv1.ClusterRoleBinding]
	Workspaces      client.Reader[*tenancyv1alpha1.Workspace]
	Types           client.Reader[*tenancyv1alpha1.WorkspaceType]
	Slices          client.Client[*apisv1alpha1.APIExportEndpointSlice]
	Reviews         *Remote[*authorizationv1.SubjectAccessReview]
	// DeepReviews sends deep reviews (authorization.DeepReviewHeader).
	DeepReviews     *Remote[*authorizationv1.SubjectAccessReview]
	ServiceAccounts client.Reader[*corev1.ServiceAccount]
	Secrets         client.Reader[*corev1.Secret]
}

// NoShardError says no shard can take a workspace.
type NoShardError struct{ Selector string }

func (e *NoShardError) Error() string {
	return fmt.Sprintf("no schedulable shard matches the location selector %q", e.Selector)
}

// ClientsFor returns clients for the shard at baseURL (cached by URL).
func (s *Shards) ClientsFor(baseURL string) (*Clients, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c, ok := s.clients[baseURL]; ok {
		return c, nil
	}
	if s.Remote == nil {
		return nil, fmt.Errorf("no credentials for other shards (--root-shard-kubeconfig)")
	}
	cfg := Unthrottled(rest.CopyConfig(s.Remote))
	cfg.Host = baseURL
	lcs, err := NewRemote[*corev1alpha1.LogicalCluster](cfg, corev1alpha1.SchemeGroupVersion.WithResource("logicalclusters"),
		func() *corev1alpha1.LogicalCluster { return &corev1alpha1.LogicalCluster{} })
	if err != nil {
		return nil, err
	}
	crbs, err := NewRemote[*rbacv1.ClusterRoleBinding](cfg, rbacv1.SchemeGroupVersion.WithResource("clusterrolebindings"),
		func() *rbacv1.ClusterRoleBinding { return &rbacv1.ClusterRoleBinding{} })
	if err != nil {
		return nil, err
	}
	wss, err := NewRemote[*tenancyv1alpha1.Workspace](cfg, tenancyv1alpha1.SchemeGroupVersion.WithResource("workspaces"),
		func() *tenancyv1alpha1.Workspace { return &tenancyv1alpha1.Workspace{} })
	if err != nil {
		return nil, err
	}
	types, err := NewRemote[*tenancyv1alpha1.WorkspaceType](cfg, tenancyv1alpha1.SchemeGroupVersion.WithResource("workspacetypes"),
		func() *tenancyv1alpha1.WorkspaceType { return &tenancyv1alpha1.WorkspaceType{} })
	if err != nil {
		return nil, err
	}
	slices, err := NewRemote[*apisv1alpha1.APIExportEndpointSlice](cfg, apisv1alpha1.SchemeGroupVersion.WithResource("apiexportendpointslices"),
		func() *apisv1alpha1.APIExportEndpointSlice { return &apisv1alpha1.APIExportEndpointSlice{} })
	if err != nil {
		return nil, err
	}
	reviews, err := NewRemote[*authorizationv1.SubjectAccessReview](cfg, authorizationv1.SchemeGroupVersion.WithResource("subjectaccessreviews"),
		func() *authorizationv1.SubjectAccessReview { return &authorizationv1.SubjectAccessReview{} })
	if err != nil {
		return nil, err
	}
	deepCfg := rest.CopyConfig(cfg)
	deepCfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return withHeader{next: rt, key: authorization.DeepReviewHeader, value: "true"}
	})
	deepReviews, err := NewRemote[*authorizationv1.SubjectAccessReview](deepCfg, authorizationv1.SchemeGroupVersion.WithResource("subjectaccessreviews"),
		func() *authorizationv1.SubjectAccessReview { return &authorizationv1.SubjectAccessReview{} })
	if err != nil {
		return nil, err
	}
	sas, err := NewRemote[*corev1.ServiceAccount](cfg, corev1.SchemeGroupVersion.WithResource("serviceaccounts"),
		func() *corev1.ServiceAccount { return &corev1.ServiceAccount{} })
	if err != nil {
		return nil, err
	}
	secrets, err := NewRemote[*corev1.Secret](cfg, corev1.SchemeGroupVersion.WithResource("secrets"), func() *corev1.Secret { return &corev1.Secret{} })
	if err != nil {
		return nil, err
	}
	if s.clients == nil {
		s.clients = map[string]*Clients{}
	}
	c := &Clients{LogicalClusters: lcs, Bindings: crbs, Workspaces: wss, Types: types, Slices: slices, Reviews: reviews, DeepReviews: deepReviews,
		ServiceAccounts: sas, Secrets: secrets}
	s.clients[baseURL] = c
	return c, nil
}

// Unthrottled lifts client-go's client-side limit (5 requests a second,
// bursts of 10) from a config for another shard: permission checks,
// service-account reads and the lifecycle of workspaces placed elsewhere
// all go through it, on the path of user requests; the limit held each
// of them up to 0.4 s under a handful of requests a second.
func Unthrottled(cfg *rest.Config) *rest.Config {
	cfg.QPS, cfg.Burst = shardQPS, shardBurst
	return cfg
}

// The limits of clients of other shards: high, as kube's loopback
// client's, not none (a bound on a runaway loop).
const (
	shardQPS   = 500
	shardBurst = 1000
)

// withHeader sets a header on every request.
type withHeader struct {
	next       http.RoundTripper
	key, value string
}

func (h withHeader) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(h.key, h.value)
	return h.next.RoundTrip(r)
}

// Get returns the Shard named name, from a list at most listKept old (a
// name the last list lacks is listed again at once). It is on the path of
// every permission check asked of another shard: listing the Shards on
// root each time cost a round trip per request on the other shards
// (and, throttled, 0.2 to 0.4 s each).
func (s *Shards) Get(ctx context.Context, name string) (corev1alpha1.Shard, error) {
	if sh, ok := s.listed.get(name); ok {
		return sh, nil
	}
	all, err := s.List(ctx)
	if err != nil {
		return corev1alpha1.Shard{}, err
	}
	s.listed.put(all)
	for _, sh := range all {
		if sh.Name == name {
			return sh, nil
		}
	}
	return corev1alpha1.Shard{}, fmt.Errorf("shard %q is not registered in root", name)
}

// listKept is how long Get answers from the last list of the Shards: what
// it serves (a Shard's URLs) does not change while the shard runs.
const listKept = 5 * time.Second

// lastList is the last list of the Shards Get made.
type lastList struct {
	mu    sync.Mutex
	at    time.Time
	items map[string]corev1alpha1.Shard
}

func (l *lastList) get(name string) (corev1alpha1.Shard, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if time.Since(l.at) > listKept {
		return corev1alpha1.Shard{}, false
	}
	sh, ok := l.items[name]
	return sh, ok
}

func (l *lastList) put(all []corev1alpha1.Shard) {
	items := make(map[string]corev1alpha1.Shard, len(all))
	for _, sh := range all {
		items[sh.Name] = sh
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.at, l.items = time.Now(), items
}

// Holding returns the clients of the other shard that holds cluster
// (false when no other shard does).
func (s *Shards) Holding(ctx context.Context, cluster string) (*Clients, bool, error) {
	shard, ok := s.Others().ShardOf(cluster)
	if !ok {
		return nil, false, nil
	}
	sh, err := s.Get(ctx, shard)
	if err != nil {
		return nil, false, err
	}
	c, err := s.ClientsFor(sh.Spec.BaseURL)
	return c, err == nil, err
}

type shardKey struct{}

// WithShard says in ctx which shard the objects of the call live on.
func WithShard(ctx context.Context, shard string) context.Context {
	return context.WithValue(ctx, shardKey{}, shard)
}

// ShardFrom is the shard WithShard put in ctx ("" when none).
func ShardFrom(ctx context.Context) string {
	s, _ := ctx.Value(shardKey{}).(string)
	return s
}

// On returns the clients of the shard named in ctx (WithShard): local's
// when it is this shard or none is named.
func (s *Shards) On(ctx context.Context, local *Clients) (*Clients, error) {
	name := ShardFrom(ctx)
	if s == nil || name == "" || name == s.Self {
		return local, nil
	}
	sh, err := s.Get(ctx, name)
	if err != nil {
		return nil, err
	}
	return s.ClientsFor(sh.Spec.BaseURL)
}
