package clusterstore

import (
	"context"
	"crypto/tls"
	"fmt"
	"strings"
	"sync"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/logutil"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/kubernetes"
	"go.uber.org/zap"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/apiserver/pkg/storage/etcd3"
	etcdfeature "k8s.io/apiserver/pkg/storage/feature"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/apiserver/pkg/storage/storagebackend/factory"
	"k8s.io/apiserver/pkg/storage/value/encrypt/identity"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"
)

// Backend is one etcd connection shared by the storage of every resource and
// every logical cluster. Stock apiserver storage opens a client per
// resource; with per-cluster CRDs that would be a client per cluster.
type Backend struct {
	client    *kubernetes.Client
	compactor etcd3.Compactor
	stop      func()
	prefix    string
	// closeProbe closes the gRPC client that asks etcd about progress
	// requests (NewBackendWithInProcessKV).
	closeProbe func()

	// nudger keeps the watch caches' progress requests answerable.
	nudger *progressNudger

	mu       sync.Mutex
	prefixes map[string]bool // resource prefixes storage was made for
}

// NewBackend connects to etcd at endpoints. Keys are stored under prefix
// (for example /registry).
func NewBackend(endpoints []string, prefix string, compactInterval time.Duration, tlsConfig *tls.Config) (*Backend, error) {
	client, err := kubernetes.New(clientConfig(endpoints, tlsConfig))
	if err != nil {
		return nil, fmt.Errorf("connecting to etcd %v: %w", endpoints, err)
	}
	return newBackend(client, prefix, compactInterval), nil
}

// clientConfig is the configuration of the core's etcd clients.
func clientConfig(endpoints []string, tlsConfig *tls.Config) clientv3.Config {
	return clientv3.Config{
		Endpoints:          endpoints,
		TLS:                tlsConfig,
		DialTimeout:        20 * time.Second,
		DialKeepAliveTime:  30 * time.Second,
		MaxCallSendMsgSize: 3 * 1024 * 1024,
		MaxCallRecvMsgSize: 128 * 1024 * 1024,
		Logger:             clientLogger(),
	}
}

// clientLogger is etcd's default client logger (its level, encoding and
// output) without the sampling of repeated lines: zap's sampler keeps
// counters of about 450 KiB per logger, for lines an idle client never
// writes.
var clientLogger = sync.OnceValue(func() *zap.Logger {
	cfg := logutil.DefaultZapLoggerConfig
	cfg.Level = zap.NewAtomicLevelAt(clientv3.ClientLogLevel())
	cfg.Sampling = nil
	lg, err := cfg.Build()
	if err != nil {
		return zap.NewNop()
	}
	return lg
})

// NewBackendWithInProcessKV sends reads, writes and watches to kv, the
// embedded etcd's in-process client: function calls and channels instead of
// loopback gRPC, HTTP/2 and protobuf framing (a watch event is handed over
// as the etcd server built it). endpoints are asked once, over gRPC, whether
// etcd supports progress requests.
//
// apiserver asks an etcd endpoint that question before its watch caches send
// any progress request, and the in-process client has no endpoints: with it
// alone the answer never came, so consistent LISTs fell back to etcd and a
// watch without resourceVersion timed out waiting for a revision its cache
// never reached ("Too large resource version"). Progress requests themselves
// go through the in-process watch stream like any other watch request;
// tlsConfig is the client TLS of that question (the embedded etcd's).
func NewBackendWithInProcessKV(kv *clientv3.Client, endpoints []string, prefix string, compactInterval time.Duration, tlsConfig *tls.Config) (*Backend, error) {
	kc := &kubernetes.Client{Client: kv}
	kc.Kubernetes = kc
	b := newBackend(kc, prefix, compactInterval)
	if etcdfeature.DefaultFeatureSupportChecker.Supports(storage.RequestWatchProgress) {
		return b, nil // asked before (the answer is process-wide)
	}
	// The probe is a bare client: the question needs no compactor and no
	// Kubernetes wrapper.
	probe, err := clientv3.New(clientConfig(endpoints, tlsConfig))
	if err != nil {
		b.stop()
		return nil, fmt.Errorf("connecting to etcd %v: %w", endpoints, err)
	}
	// The check asks in the background, with the probe's context and
	// retries: the probe is closed once the answer is in, or with the
	// backend.
	etcdfeature.DefaultFeatureSupportChecker.CheckClient(probe.Ctx(), probe, storage.RequestWatchProgress)
	var once sync.Once
	b.closeProbe = func() { once.Do(func() { _ = probe.Close() }) }
	go func() {
		// Closing the probe cancels the check: wait for the answer (kube's
		// checker retries for about a minute), polling less and less often;
		// without one, the probe stays open until the backend closes.
		wait := 10 * time.Millisecond
		for deadline := time.Now().Add(5 * time.Minute); time.Now().Before(deadline); wait = min(2*wait, time.Second) {
			if etcdfeature.DefaultFeatureSupportChecker.Supports(storage.RequestWatchProgress) {
				b.closeProbe()
				return
			}
			select {
			case <-probe.Ctx().Done():
				return
			case <-time.After(wait):
			}
		}
	}()
	return b, nil
}

func newBackend(client *kubernetes.Client, prefix string, compactInterval time.Duration) *Backend {
	c := etcd3.NewCompactor(client.Client, compactInterval, clock.RealClock{}, nil)
	return &Backend{client: client, compactor: c, prefix: prefix, stop: c.Stop, prefixes: map[string]bool{},
		nudger: newProgressNudger(client.Client, "/meshplane/watch-progress")}
}

// Client returns the shared etcd client.
func (b *Backend) Client() *clientv3.Client { return b.client.Client }

// Close stops compaction and closes the connection.
func (b *Backend) Close() error {
	b.stop()
	if b.closeProbe != nil {
		b.closeProbe()
	}
	return b.client.Close()
}

// Ready reports whether etcd answers a read within a second.
func (b *Backend) Ready(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	_, err := b.client.Client.Get(ctx, "/meshplane-health", clientv3.WithCountOnly())
	return err
}

// Decorator builds cluster-partitioned storage on the shared connection.
// It is a generic.StorageDecorator; the watch cache is deliberately not used.
func (b *Backend) Decorator(
	config *storagebackend.ConfigForResource,
	resourcePrefix string,
	keyFunc func(obj runtime.Object) (string, error),
	newFunc func() runtime.Object,
	newListFunc func() runtime.Object,
	getAttrsFunc storage.AttrFunc,
	trigger storage.IndexerFuncs,
	indexers *cache.Indexers,
) (storage.Interface, factory.DestroyFunc, error) {
	inner, err := b.NewStore(config, newFunc, newListFunc, resourcePrefix)
	if err != nil {
		return nil, nil, err
	}
	return NewForResource(inner, resourcePrefix, config.GroupResource), func() {}, nil
}

var _ generic.StorageDecorator = (&Backend{}).Decorator

// NewStore returns raw (unpartitioned) etcd3 storage for one resource.
func (b *Backend) NewStore(config *storagebackend.ConfigForResource, newFunc, newListFunc func() runtime.Object, resourcePrefix string) (storage.Interface, error) {
	b.mu.Lock()
	b.prefixes["/"+trimSlashes(resourcePrefix)] = true
	b.mu.Unlock()
	versioner := storage.APIObjectVersioner{}
	leases := config.LeaseManagerConfig
	if leases.ReuseDurationSeconds == 0 {
		leases = etcd3.NewDefaultLeaseManagerConfig()
	}
	return etcd3.New(b.client, b.compactor, limitSize(config.Codec, MaxObjectBytes), newFunc, newListFunc, b.prefix,
		"/"+trimSlashes(resourcePrefix), config.GroupResource, identity.NewEncryptCheckTransformer(),
		leases, etcd3.NewDefaultDecoder(config.Codec, versioner), versioner)
}

// PurgeCluster deletes everything a logical cluster holds, in every
// resource prefix the server has stored objects under plus extra (such as
// the prefixes of the cluster's custom resources), except the prefixes in
// keep. Watchers see the objects deleted.
func (b *Backend) PurgeCluster(ctx context.Context, cluster string, extra []string, keep map[string]bool) error {
	b.mu.Lock()
	prefixes := make([]string, 0, len(b.prefixes)+len(extra))
	for p := range b.prefixes {
		prefixes = append(prefixes, p)
	}
	b.mu.Unlock()
	prefixes = append(prefixes, extra...)
	base := strings.TrimSuffix(b.prefix, "/")
	for _, p := range prefixes {
		p = "/" + trimSlashes(p)
		if keep[p] {
			continue
		}
		key := base + p + "/" + cluster + "/"
		if _, err := b.client.Client.Delete(ctx, key, clientv3.WithPrefix()); err != nil {
			return fmt.Errorf("purging %s: %w", key, err)
		}
	}
	return nil
}
