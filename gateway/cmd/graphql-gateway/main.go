// Command graphql-gateway serves every workspace of a Meshplane core as a
// typed GraphQL API at <listen>/api/clusters/<workspace>/graphql.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"

	"github.com/meshplane/meshplane/gateway/internal/graphiql"
	"github.com/meshplane/meshplane/gateway/internal/kube"
	"github.com/meshplane/meshplane/gateway/internal/server"
	"github.com/meshplane/meshplane/gateway/internal/watch"
)

// Options are the command's flags.
type Options struct {
	Kubeconfig string
	Context    string
	// ProxyKubeconfig and ProxyContext reach the front proxy of a sharded
	// install.
	ProxyKubeconfig string
	ProxyContext    string
	Listen          string
	Refresh         time.Duration
	Idle            time.Duration
	Access          time.Duration
	Limits          server.Limits
	GraphiQL        string
}

// AddFlags registers the flags.
func (o *Options) AddFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.Kubeconfig, "kubeconfig", o.Kubeconfig, "admin kubeconfig of the core (reads discovery and OpenAPI of every workspace; user requests carry the user's own token)")
	fs.StringVar(&o.Context, "context", o.Context, "context of --kubeconfig to use")
	fs.StringVar(&o.ProxyKubeconfig, "front-proxy-kubeconfig", o.ProxyKubeconfig, "admin kubeconfig on the front proxy of a sharded install: every workspace is read and served through the proxy (which routes it to its shard), and --kubeconfig must then reach the root shard (shard-base context): its Shards are followed, and each shard's APIBindings and CRDs are watched at the Shard's spec.baseURL with --kubeconfig's credentials and CA")
	fs.StringVar(&o.ProxyContext, "front-proxy-context", o.ProxyContext, "context of --front-proxy-kubeconfig to use")
	fs.StringVar(&o.Listen, "listen", o.Listen, "address to serve on (host:port)")
	fs.DurationVar(&o.Refresh, "schema-refresh-interval", o.Refresh, "how often the API set of every workspace in use is re-checked as a fallback (APIBinding and CRD events trigger re-checks at once; schemas are rebuilt when the set changed)")
	fs.DurationVar(&o.Idle, "workspace-idle-timeout", o.Idle, "forget a workspace's schema after this long without requests")
	fs.DurationVar(&o.Access, "subscription-access-interval", o.Access, "how often the access of open subscriptions is re-checked with the subscriber's token (one SelfSubjectAccessReview per token, workspace and resource); a subscription whose access is gone ends with an error within about this long")
	fs.StringVar(&o.GraphiQL, "graphiql-assets", o.GraphiQL, "directory with GraphiQL's browser files to serve instead of the ones built in (scripts/fetch-graphiql.sh fills gateway/internal/graphiql/assets)")
	fs.IntVar(&o.Limits.Depth, "max-depth", o.Limits.Depth, "maximum query depth (0: none)")
	fs.IntVar(&o.Limits.Complexity, "max-complexity", o.Limits.Complexity, "maximum query complexity (0: none)")
	fs.IntVar(&o.Limits.Batch, "max-batch", o.Limits.Batch, "maximum operations in one batched request")
	fs.IntVar(&o.Limits.InFlight, "max-in-flight", o.Limits.InFlight, "maximum requests served at once (subscriptions not counted)")
	fs.IntVar(&o.Limits.Subscriptions, "max-subscriptions", o.Limits.Subscriptions, "maximum open subscriptions")
	fs.Int64Var(&o.Limits.BodyBytes, "max-body-bytes", o.Limits.BodyBytes, "maximum size of a request body in bytes; a larger one is answered 413 and its connection closed (0: none)")
}

// Validate checks the flags.
func (o *Options) Validate() error {
	if o.Kubeconfig == "" {
		return errors.New("--kubeconfig is required")
	}
	if _, _, err := net.SplitHostPort(o.Listen); err != nil {
		return fmt.Errorf("--listen %q: %w", o.Listen, err)
	}
	if o.Access <= 0 {
		return errors.New("--subscription-access-interval must be positive")
	}
	if o.Refresh <= 0 {
		return errors.New("--schema-refresh-interval must be positive")
	}
	return nil
}

func main() {
	o := &Options{Context: "shard-base", ProxyContext: "shard-base", Listen: "127.0.0.1:6450", Refresh: time.Minute, Idle: 30 * time.Minute, Access: watch.DefaultAccessInterval, Limits: server.DefaultLimits}
	fs := flag.NewFlagSet("graphql-gateway", flag.ExitOnError)
	klog.InitFlags(fs)
	o.AddFlags(fs)
	_ = fs.Parse(os.Args[1:])
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "graphql-gateway:", err)
		os.Exit(1)
	}
}

func run(o *Options) error {
	if err := o.Validate(); err != nil {
		return err
	}
	cfg, err := loadConfig(o.Kubeconfig, o.Context)
	if err != nil {
		return err
	}
	// Without a proxy, the one core serves every request and its wildcard
	// watches; with one, requests go through the proxy and the shards are
	// followed from the root shard.
	var shardsCfg *rest.Config
	if o.ProxyKubeconfig != "" {
		shardsCfg = cfg
		if cfg, err = loadConfig(o.ProxyKubeconfig, o.ProxyContext); err != nil {
			return err
		}
	}
	kc, err := kube.New(cfg)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	gi := graphiql.New()
	if o.GraphiQL != "" {
		gi = graphiql.NewFromFS(os.DirFS(o.GraphiQL))
	}
	if m := gi.Missing(); len(m) > 0 {
		if o.GraphiQL != "" {
			return fmt.Errorf("--graphiql-assets %s lacks %v", o.GraphiQL, m)
		}
		klog.InfoS("WARNING: built without GraphiQL's browser files (run scripts/fetch-graphiql.sh and rebuild); browsers get a page saying so", "missing", m)
	}
	srv := server.New(server.Config{Kube: kc, Shards: shardsCfg, Limits: o.Limits, Refresh: o.Refresh, Idle: o.Idle, AccessInterval: o.Access, GraphiQL: gi})
	go srv.Run(ctx)
	l, err := net.Listen("tcp", o.Listen)
	if err != nil {
		return err
	}
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = hs.Shutdown(sctx)
	}()
	klog.InfoS("serving GraphQL", "address", "http://"+l.Addr().String(), "endpoint", "/api/clusters/<workspace>/graphql", "core", kc.Base, "sharded", shardsCfg != nil)
	if err := hs.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// loadConfig reads one context of a kubeconfig file.
func loadConfig(path, context string) (*rest.Config, error) {
	raw, err := clientcmd.LoadFromFile(path)
	if err != nil {
		return nil, fmt.Errorf("loading %s: %w", path, err)
	}
	cfg, err := clientcmd.NewNonInteractiveClientConfig(*raw, context, &clientcmd.ConfigOverrides{}, nil).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("context %s of %s: %w", context, path, err)
	}
	return cfg, nil
}
