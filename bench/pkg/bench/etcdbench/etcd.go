// Package etcdbench measures raw etcd put throughput as a ceiling for the
// API server's write path, either against an existing endpoint or against a
// throw-away embedded etcd.
package etcdbench

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"

	"github.com/meshplane/meshplane/bench/pkg/bench"
)

// Embedded is a throw-away single-member etcd in a temporary directory.
type Embedded struct {
	Endpoint string
	etcd     *embed.Etcd
	dir      string
	level    zap.AtomicLevel
	once     sync.Once
	closeErr error
}

// StartEmbedded starts an embedded etcd on free 127.0.0.1 ports with its
// data in a fresh temporary directory and waits until it serves.
func StartEmbedded(ctx context.Context) (*Embedded, error) {
	dir, err := os.MkdirTemp("", "meshplane-bench-etcd-")
	if err != nil {
		return nil, err
	}
	var lastErr error
	// Free-port selection is racy; retry a few times on bind failures.
	for range 3 {
		e, err := startEmbeddedOnce(ctx, dir)
		if err == nil {
			return e, nil
		}
		lastErr = err
		if ctx.Err() != nil {
			break
		}
		_ = os.RemoveAll(dir)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, err
		}
	}
	_ = os.RemoveAll(dir)
	return nil, lastErr
}

func startEmbeddedOnce(ctx context.Context, dir string) (*Embedded, error) {
	cport, err := bench.FreePort()
	if err != nil {
		return nil, err
	}
	pport, err := bench.FreePort()
	if err != nil {
		return nil, err
	}
	curl := url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", cport)}
	purl := url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", pport)}

	cfg := embed.NewConfig()
	cfg.Name = "meshplane-bench"
	cfg.Dir = dir
	cfg.ListenClientUrls = []url.URL{curl}
	cfg.AdvertiseClientUrls = []url.URL{curl}
	cfg.ListenPeerUrls = []url.URL{purl}
	cfg.AdvertisePeerUrls = []url.URL{purl}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	// Errors only while running; silenced on Close, where etcd logs the
	// shutdown of its listeners as errors.
	level := zap.NewAtomicLevelAt(zap.ErrorLevel)
	zc := zap.NewProductionConfig()
	zc.Level = level
	zc.Sampling = nil
	zc.OutputPaths = []string{"stderr"}
	zc.ErrorOutputPaths = []string{"stderr"}
	lg, err := zc.Build()
	if err != nil {
		return nil, err
	}
	cfg.Logger = "zap"
	cfg.LogLevel = "error"
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(lg)

	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return nil, fmt.Errorf("start embedded etcd: %w", err)
	}
	timeout := time.NewTimer(60 * time.Second)
	defer timeout.Stop()
	select {
	case <-e.Server.ReadyNotify():
		return &Embedded{Endpoint: curl.String(), etcd: e, dir: dir, level: level}, nil
	case err := <-e.Err():
		level.SetLevel(zap.FatalLevel)
		e.Close()
		return nil, fmt.Errorf("embedded etcd failed: %w", err)
	case <-ctx.Done():
		level.SetLevel(zap.FatalLevel)
		e.Close()
		return nil, ctx.Err()
	case <-timeout.C:
		level.SetLevel(zap.FatalLevel)
		e.Close()
		return nil, errors.New("embedded etcd not ready within 60s")
	}
}

// Close stops etcd and removes its data directory. It is idempotent.
func (e *Embedded) Close() error {
	e.once.Do(func() {
		e.level.SetLevel(zap.FatalLevel)
		e.etcd.Close()
		e.closeErr = os.RemoveAll(e.dir)
	})
	return e.closeErr
}

// Options configure Puts.
type Options struct {
	Endpoints []string
	TLS       transport.TLSInfo // zero value: plain connection
	Puts      int               // per run
	Workers   int               // concurrency of the multi-client run
	ValueSize int
	Timeout   time.Duration // whole phase
	Logf      func(format string, args ...any)
}

// Puts writes opts.Puts values of opts.ValueSize bytes under a random
// prefix /meshplane-bench/<random>/ with 1 worker and then with
// opts.Workers workers (sharing one client, like an API server does),
// records throughput and latency in rep, and deletes the prefix.
func Puts(parent context.Context, opts Options, rep *bench.Report, label string) (retErr error) {
	if opts.Logf == nil {
		opts.Logf = func(string, ...any) {}
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 10 * time.Minute
	}
	ctx, cancel := context.WithTimeout(parent, opts.Timeout)
	defer cancel()

	var tlsCfg *tls.Config
	if !opts.TLS.Empty() {
		c, err := opts.TLS.ClientConfig()
		if err != nil {
			return fmt.Errorf("etcd TLS: %w", err)
		}
		tlsCfg = c
	} else {
		for _, ep := range opts.Endpoints {
			if strings.HasPrefix(ep, "https://") {
				// Server-authenticated TLS without client certificates.
				tlsCfg = &tls.Config{MinVersion: tls.VersionTLS12}
			}
		}
	}
	cli, err := clientv3.New(clientv3.Config{
		Endpoints:   opts.Endpoints,
		DialTimeout: 10 * time.Second,
		TLS:         tlsCfg,
	})
	if err != nil {
		return fmt.Errorf("etcd client: %w", err)
	}
	defer cli.Close()

	prefix := "/meshplane-bench/" + bench.RandomSuffix(10) + "/"
	value := strings.Repeat("v", max(opts.ValueSize, 1))

	// Warm-up put (also verifies connectivity); removed with the prefix.
	if _, err := cli.Put(ctx, prefix+"warmup", value); err != nil {
		return fmt.Errorf("etcd put to %s: %w", strings.Join(opts.Endpoints, ","), err)
	}
	defer func() {
		dctx, dcancel := context.WithTimeout(context.WithoutCancel(parent), 30*time.Second)
		defer dcancel()
		if _, err := cli.Delete(dctx, prefix, clientv3.WithPrefix()); err != nil {
			retErr = errors.Join(retErr, fmt.Errorf("delete etcd prefix %s: %w", prefix, err))
		}
	}()

	rep.Add("etcd_value_bytes", label+" value size", float64(len(value)), bench.UnitBytes)
	var errs []error
	for _, w := range uniq(1, opts.Workers) {
		opts.Logf("etcd: %d puts of %d bytes with %d worker(s) to %s", opts.Puts, len(value), w, strings.Join(opts.Endpoints, ","))
		res := bench.Run(ctx, bench.RunOptions{Total: opts.Puts, Workers: w, MaxErrors: 10},
			func(ctx context.Context, _, i int) error {
				_, err := cli.Put(ctx, fmt.Sprintf("%sw%d-%08d", prefix, w, i), value)
				return err
			})
		clients := "1 client"
		if w > 1 {
			clients = fmt.Sprintf("%d clients", w)
		}
		rep.AddRun(fmt.Sprintf("etcd_put_%dc", w), label+" puts", clients, res)
		if err := res.Err(); err != nil {
			errs = append(errs, fmt.Errorf("etcd puts with %d workers: %w", w, err))
		}
	}
	return errors.Join(errs...)
}

func uniq(a, b int) []int {
	if b <= a {
		return []int{a}
	}
	return []int{a, b}
}
