// Command kubecluster-mounts is the example mount controller and proxy:
// it watches the KubeClusters of one workspace (--kubeconfig), mounts
// each one's target API (a kubeconfig in a Secret) behind its HTTPS
// proxy with the target's own credentials, and reports the proxy URL and
// the phase in the KubeCluster's status, so that a Workspace with
// spec.mount.ref naming the KubeCluster serves the target's API.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"

	"github.com/meshplane/meshplane/examples/mounts/kubecluster"
	"github.com/meshplane/meshplane/examples/mounts/proxy"
	"github.com/meshplane/meshplane/examples/mounts/serving"
	"github.com/meshplane/meshplane/sdk/egress"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "kubecluster-mounts:", err)
		os.Exit(1)
	}
}

func run() error {
	var (
		kubeconfig   = flag.String("kubeconfig", "", "kubeconfig of the workspace whose KubeClusters are served (required)")
		listen       = flag.String("listen-address", "127.0.0.1:9443", "address the proxy listens on")
		externalURL  = flag.String("external-url", "", "URL the core reaches the proxy at (default https://<listen-address>)")
		clientCA     = flag.String("client-ca-file", "", "CA that signs the core's mount client certificate: the core's ca.crt (required)")
		allowed      = flag.String("allowed-clients", "system:meshplane:mount-proxy", "comma-separated client certificate names accepted (empty: any the CA signed)")
		certFile     = flag.String("tls-cert-file", "", "serving certificate (default: self-signed, in --cert-dir)")
		keyFile      = flag.String("tls-private-key-file", "", "key of --tls-cert-file")
		certDir      = flag.String("cert-dir", ".kubecluster-mounts", "where the self-signed serving certificate is kept (give "+serving.CertFile+" to the core's --mount-ca-file)")
		recheck      = flag.Duration("recheck-interval", 10*time.Second, "how often targets are checked again")
		healthListen = flag.String("health-address", "", "plain HTTP address for /healthz, /livez, /readyz and /metrics (off when empty)")
		targetHosts  = flag.String("target-allowed-hosts", "", "where targets (the server of a KubeCluster's kubeconfig) may be, comma separated: IP addresses, CIDRs, host names or *.domain, each with an optional :port; loopback, link-local and this proxy's own address only when named explicitly (127.0.0.1:6443). Empty: nowhere")
	)
	klog.InitFlags(nil)
	flag.Parse()
	if *kubeconfig == "" {
		return errors.New("--kubeconfig is required")
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		return err
	}
	host, _, err := net.SplitHostPort(*listen)
	if err != nil {
		return fmt.Errorf("--listen-address: %w", err)
	}
	tlsConfig, err := serving.Config(serving.Options{CertFile: *certFile, KeyFile: *keyFile, CertDir: *certDir,
		Hosts: []string{host}, ClientCAFile: *clientCA})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return err
	}
	if *externalURL == "" {
		*externalURL = "https://" + ln.Addr().String()
	}
	var names []string
	if *allowed != "" {
		names = strings.Split(*allowed, ",")
	}
	targets, err := egress.ParseAllowList("--target-allowed-hosts", strings.Split(*targetHosts, ","))
	if err != nil {
		return err
	}
	for _, a := range []string{*listen, *healthListen} {
		if ap, err := netip.ParseAddrPort(a); err == nil {
			targets.Reserved = append(targets.Reserved, ap)
		}
	}
	p := proxy.New(names)
	ctl, err := kubecluster.New(cfg, p, strings.TrimSuffix(*externalURL, "/"), *recheck, targets)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	srv := &http.Server{Handler: p, TLSConfig: tlsConfig, ReadHeaderTimeout: 10 * time.Second}
	errs := make(chan error, 2)
	go func() { errs <- srv.ServeTLS(ln, "", "") }()
	if *healthListen != "" {
		mux := http.NewServeMux()
		ok := func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) }
		mux.HandleFunc("/healthz", ok)
		mux.HandleFunc("/livez", ok)
		mux.HandleFunc("/readyz", func(w http.ResponseWriter, r *http.Request) {
			if !ctl.HasSynced() {
				http.Error(w, "KubeClusters not listed yet", http.StatusServiceUnavailable)
				return
			}
			ok(w, r)
		})
		prometheus.MustRegister(proxy.Requests)
		mux.Handle("/metrics", promhttp.Handler())
		hs := &http.Server{Addr: *healthListen, Handler: mux, ReadHeaderTimeout: 10 * time.Second}
		go func() { errs <- hs.ListenAndServe() }()
		defer hs.Close()
	}
	klog.InfoS("Serving mounts", "url", *externalURL)
	go func() { errs <- ctl.Run(ctx) }()
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
