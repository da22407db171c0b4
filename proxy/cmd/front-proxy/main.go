// Command front-proxy is the one HTTPS endpoint of a sharded Meshplane:
// it routes /clusters/<path>/... to the shard holding the workspace, from
// an index fed by watches on every shard (see docs/sharding.md).
package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"

	"github.com/meshplane/meshplane/proxy/internal/index"
	"github.com/meshplane/meshplane/proxy/internal/routing"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "front-proxy:", err)
		os.Exit(1)
	}
}

type options struct {
	bindAddress, metricsAddress      string
	securePort                       int
	certFile, keyFile, clientCAFile  string
	rootKubeconfig, shardsKubeconfig string
	proxyClientCert, proxyClientKey  string
}

func run() error {
	var o options
	flag.StringVar(&o.bindAddress, "bind-address", "127.0.0.1", "IP address to serve on.")
	flag.IntVar(&o.securePort, "secure-port", 6443, "Port to serve HTTPS on.")
	flag.StringVar(&o.certFile, "tls-cert-file", "", "Serving certificate (required).")
	flag.StringVar(&o.keyFile, "tls-private-key-file", "", "Key of --tls-cert-file (required).")
	flag.StringVar(&o.clientCAFile, "client-ca-file", "", "CA that signs client certificates the proxy accepts (CN = user, O = groups; system:masters is never forwarded). Without it, callers are authenticated by the shards (bearer tokens).")
	flag.StringVar(&o.rootKubeconfig, "root-kubeconfig", "", "Kubeconfig of the root shard: its Shards are watched (required).")
	flag.StringVar(&o.shardsKubeconfig, "shards-kubeconfig", "", "Kubeconfig whose credentials and CA are used on every shard (its server is replaced by each Shard's spec.baseURL; default --root-kubeconfig).")
	flag.StringVar(&o.proxyClientCert, "proxy-client-cert-file", "", "Client certificate presented with identity headers to shards (they trust it through --requestheader-client-ca-file); required with --client-ca-file.")
	flag.StringVar(&o.proxyClientKey, "proxy-client-key-file", "", "Key of --proxy-client-cert-file.")
	flag.StringVar(&o.metricsAddress, "metrics-address", "", "Plain HTTP address for /metrics, /healthz and /readyz (off when empty).")
	klog.InitFlags(nil)
	flag.Parse()
	if err := o.validate(); err != nil {
		return err
	}
	root, err := clientcmd.BuildConfigFromFlags("", o.rootKubeconfig)
	if err != nil {
		return fmt.Errorf("--root-kubeconfig: %w", err)
	}
	shards := root
	if o.shardsKubeconfig != "" {
		if shards, err = clientcmd.BuildConfigFromFlags("", o.shardsKubeconfig); err != nil {
			return fmt.Errorf("--shards-kubeconfig: %w", err)
		}
	}
	transports, err := o.transports(shards)
	if err != nil {
		return err
	}
	serving, err := o.servingTLS()
	if err != nil {
		return err
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx = klog.NewContext(ctx, klog.Background())
	idx := index.New()
	watcher := &index.Watcher{Index: idx, Root: root, Shards: shards}
	handler := routing.New(idx, transports, watcher.HasSynced)
	registry := prometheus.NewRegistry()
	routing.Register(registry)

	ln, err := net.Listen("tcp", net.JoinHostPort(o.bindAddress, fmt.Sprint(o.securePort)))
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: handler, TLSConfig: serving, ReadHeaderTimeout: 30 * time.Second}
	errs := make(chan error, 3)
	go func() { errs <- srv.ServeTLS(ln, "", "") }()
	go func() { errs <- watcher.Run(ctx) }()
	if o.metricsAddress != "" {
		mux := http.NewServeMux()
		mux.Handle("/metrics", promhttp.HandlerFor(registry, promhttp.HandlerOpts{}))
		mux.Handle("/", handler) // /healthz, /livez, /readyz
		ms := &http.Server{Addr: o.metricsAddress, Handler: onlyLocal(mux), ReadHeaderTimeout: 10 * time.Second}
		go func() { errs <- ms.ListenAndServe() }()
		defer ms.Close()
	}
	klog.InfoS("Serving", "address", ln.Addr().String())
	select {
	case <-ctx.Done():
	case err := <-errs:
		if err != nil && !errors.Is(err, http.ErrServerClosed) {
			return err
		}
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return srv.Shutdown(shutdown)
}

// onlyLocal serves the proxy's own endpoints on the metrics address and
// nothing it would route to a shard.
func onlyLocal(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/metrics", "/healthz", "/livez", "/readyz":
			next.ServeHTTP(w, r)
		default:
			http.NotFound(w, r)
		}
	})
}

func (o *options) validate() error {
	var errs []error
	if o.certFile == "" || o.keyFile == "" {
		errs = append(errs, errors.New("--tls-cert-file and --tls-private-key-file are required"))
	}
	if o.rootKubeconfig == "" {
		errs = append(errs, errors.New("--root-kubeconfig is required"))
	}
	if o.clientCAFile != "" && (o.proxyClientCert == "" || o.proxyClientKey == "") {
		errs = append(errs, errors.New("--client-ca-file needs --proxy-client-cert-file and --proxy-client-key-file: the proxy forwards the users it authenticates with its own certificate"))
	}
	if o.securePort < 1 || o.securePort > 65535 {
		errs = append(errs, fmt.Errorf("--secure-port %d is not a port (1-65535)", o.securePort))
	}
	if net.ParseIP(o.bindAddress) == nil {
		errs = append(errs, fmt.Errorf("--bind-address %q is not an IP address", o.bindAddress))
	}
	return errors.Join(errs...)
}

// servingTLS asks for client certificates of --client-ca-file (verified
// when given) and serves the given certificate.
func (o *options) servingTLS() (*tls.Config, error) {
	cert, err := tls.LoadX509KeyPair(o.certFile, o.keyFile)
	if err != nil {
		return nil, fmt.Errorf("serving certificate: %w", err)
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{cert}, NextProtos: []string{"h2", "http/1.1"}}
	if o.clientCAFile != "" {
		pem, err := os.ReadFile(o.clientCAFile)
		if err != nil {
			return nil, fmt.Errorf("--client-ca-file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--client-ca-file %s holds no certificate", o.clientCAFile)
		}
		cfg.ClientCAs, cfg.ClientAuth = pool, tls.VerifyClientCertIfGiven
	}
	return cfg, nil
}

// transports trust the CA of the shards' kubeconfig; the identified one
// also presents the proxy's client certificate (routing.NewTransports).
func (o *options) transports(shards *rest.Config) (routing.Transports, error) {
	caOnly := &rest.Config{TLSClientConfig: rest.TLSClientConfig{CAFile: shards.CAFile, CAData: shards.CAData,
		Insecure: shards.Insecure, ServerName: shards.ServerName}}
	base, err := rest.TLSConfigFor(caOnly)
	if err != nil {
		return routing.Transports{}, err
	}
	if o.proxyClientCert == "" {
		return routing.NewTransports(base, nil), nil
	}
	cert, err := tls.LoadX509KeyPair(o.proxyClientCert, o.proxyClientKey)
	if err != nil {
		return routing.Transports{}, fmt.Errorf("--proxy-client-cert-file: %w", err)
	}
	return routing.NewTransports(base, &cert), nil
}
