package server

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/go-logr/logr"
	kcpapisv1alpha1 "github.com/kcp-dev/sdk/apis/apis/v1alpha1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	ctrlmanager "sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	corev1alpha1 "github.com/meshplane/meshplane/apis/core/v1alpha1"
	"github.com/meshplane/meshplane/providers/manager"
	"github.com/meshplane/meshplane/sdk/keyfile"
	"github.com/meshplane/meshplane/webhook/internal/clusters"
	"github.com/meshplane/meshplane/webhook/internal/decision"
	"github.com/meshplane/meshplane/webhook/internal/fgacheck"
	"github.com/meshplane/meshplane/webhook/internal/invites"
	"github.com/meshplane/meshplane/webhook/internal/metrics"
	"github.com/meshplane/meshplane/webhook/internal/myorgs"
	"github.com/meshplane/meshplane/webhook/internal/orgs"
	"github.com/meshplane/meshplane/webhook/internal/resources"
)

// Run serves until ctx ends. /authz answers at once: 503 until the account
// workspaces have been read.
func Run(ctx context.Context, c *Completed, log logr.Logger) error {
	var fgaOpts []fgacheck.Option
	if c.OpenFGAKeyFile != "" {
		key, err := keyfile.Read(c.OpenFGAKeyFile)
		if err != nil {
			return err
		}
		fgaOpts = append(fgaOpts, fgacheck.WithPresharedKey(key))
	}
	fgaClient, err := fgacheck.New(c.OpenFGAURL, c.OpenFGATimeout, fgaOpts...)
	if err != nil {
		return err
	}
	reg := clusters.NewRegistry()
	m := metrics.New(func() float64 { return float64(reg.Len()) })
	discovery, err := rest.HTTPClientFor(c.Base)
	if err != nil {
		return fmt.Errorf("discovery client: %w", err)
	}
	d := &decision.Decider{Clusters: reg, FGA: fgaClient, Metrics: m,
		Resources:       &resources.Resolver{Host: c.Base.Host, HTTP: discovery, TTL: c.DiscoveryTTL},
		Orgs:            &orgs.Reader{Host: c.Base.Host, HTTP: discovery},
		CacheTTL:        c.DecisionCacheTTL,
		NewClusterGrace: c.NewClusterGrace,
		RetryAfter:      time.Second,
	}
	if c.InviteEmailExtraKey != "" {
		d.Invites = &invites.Acceptor{ExtraKey: c.InviteEmailExtraKey, Log: log.WithName("invites")}
	}
	d.Init(c.ModelRefresh)
	idx := myorgs.NewIndex()

	errc := make(chan error, 3)
	srv, err := c.httpsServer(d, fgaClient, reg, idx, m, log)
	if err != nil {
		return err
	}
	go func() { errc <- serve(srv, true) }()
	var metricsSrv *http.Server
	if c.MetricsBindAddress != "0" && c.MetricsBindAddress != "" {
		mux := http.NewServeMux()
		mux.Handle("/metrics", m.Handler())
		metricsSrv = &http.Server{Addr: c.MetricsBindAddress, Handler: mux, ReadHeaderTimeout: 10 * time.Second}
		go func() { errc <- serve(metricsSrv, false) }()
	}
	log.Info("serving", "address", srv.Addr, "metrics", c.MetricsBindAddress, "openfga", c.OpenFGAURL)

	go func() {
		errc <- c.learnClusters(ctx, reg, idx, d.Orgs.Cluster, d.GrantsChanged, d.Invites, log.WithName("clusters"))
	}()

	select {
	case <-ctx.Done():
	case err = <-errc:
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = srv.Shutdown(shutdown)
	if metricsSrv != nil {
		_ = metricsSrv.Shutdown(shutdown)
	}
	return err
}

func serve(s *http.Server, tls bool) error {
	var err error
	if tls {
		err = s.ListenAndServeTLS("", "")
	} else {
		err = s.ListenAndServe()
	}
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

func (c *Completed) httpsServer(d *decision.Decider, fgaClient *fgacheck.Client, reg *clusters.Registry, idx *myorgs.Index, m *metrics.Metrics, log logr.Logger) (*http.Server, error) {
	cert, err := tls.LoadX509KeyPair(c.TLSCertFile, c.TLSPrivateKeyFile)
	if err != nil {
		return nil, fmt.Errorf("serving certificate: %w", err)
	}
	tlsConfig := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	if c.ClientCAFile != "" {
		pem, err := os.ReadFile(c.ClientCAFile)
		if err != nil {
			return nil, err
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--client-ca-file %s holds no PEM certificate", c.ClientCAFile)
		}
		// Verified when given; /authz requires one, the probes do not.
		tlsConfig.ClientCAs, tlsConfig.ClientAuth = pool, tls.VerifyClientCertIfGiven
	}
	var authz http.Handler = AuthzHandler(d, m, log.WithName("authz"))
	var rules http.Handler = RulesHandler(d, fgaClient, log.WithName("rules"))
	var organizations http.Handler = OrganizationsHandler(d, idx, reg.Synced, log.WithName("organizations"))
	if c.ClientCAFile != "" {
		authz, rules, organizations = requireClientCert(authz), requireClientCert(rules), requireClientCert(organizations)
	}
	mux := http.NewServeMux()
	mux.Handle("/authz", authz)
	mux.Handle("/rules", rules)
	mux.Handle("/organizations", organizations)
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
	mux.HandleFunc("/livez", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		if !reg.Synced() {
			http.Error(w, "account workspaces not read yet", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ok"))
	})
	return &http.Server{Addr: net.JoinHostPort(c.BindAddress, strconv.Itoa(c.SecurePort)), Handler: mux, TLSConfig: tlsConfig,
		ReadHeaderTimeout: 10 * time.Second}, nil
}

// learnClusters follows the endpoint slice through the provider kit: one
// wildcard list for the start, then the AccountInfo of every engaged
// workspace; and the grants (RoleAssignments, Stores) of all of them, also
// indexed by subject for /organizations; and the invitations by e-mail.
func (c *Completed) learnClusters(ctx context.Context, reg *clusters.Registry, idx *myorgs.Index, orgsCluster func(context.Context) (string, error), grantsChanged func(org string), acceptor *invites.Acceptor, log logr.Logger) error {
	scheme := runtime.NewScheme()
	if err := corev1alpha1.AddToScheme(scheme); err != nil {
		return err
	}
	if err := kcpapisv1alpha1.AddToScheme(scheme); err != nil {
		return err
	}
	kit, err := manager.New(ctx, c.Provider, manager.Options{
		EndpointSlice: c.EndpointSlice, Scheme: scheme, Log: log,
		Manager: ctrlmanager.Options{Metrics: metricsserver.Options{BindAddress: "0"}},
	})
	if err != nil {
		return fmt.Errorf("provider kit: %w", err)
	}
	if err := clusters.SetupWithManager(kit.Manager, reg, log); err != nil {
		return err
	}
	go func() {
		if err := clusters.InitialList(ctx, kit.VirtualWorkspace, reg, log); err != nil && ctx.Err() == nil {
			log.Error(err, "initial list of account workspaces")
		}
	}()
	go func() {
		if err := clusters.WatchGrants(ctx, kit.VirtualWorkspace, reg, grantsChanged, log); err != nil {
			log.Error(err, "watching grants")
		}
	}()
	if acceptor != nil {
		go func() {
			if err := invites.Watch(ctx, kit.VirtualWorkspace, acceptor); err != nil {
				log.Error(err, "watching invitations")
			}
		}()
	}
	go func() {
		if err := myorgs.Watch(ctx, kit.VirtualWorkspace, orgsCluster, idx, log.WithName("myorgs")); err != nil {
			log.Error(err, "indexing the organizations' grants")
		}
	}()
	return kit.Manager.Start(ctx)
}

// requireClientCert refuses requests without a verified client
// certificate.
func requireClientCert(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.TLS == nil || len(r.TLS.VerifiedChains) == 0 {
			http.Error(w, "a client certificate signed by --client-ca-file is required", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}
