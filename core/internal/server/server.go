// Package server assembles the Meshplane core: etcd, storage partitioned by
// logical cluster, the built-in APIs, authentication and authorization, and
// the generic apiserver that serves them.
//
// It is built in stages, as kube-apiserver and the sample-apiserver are:
// options.Options (flags) -> Complete -> NewConfig (files, certificates,
// authentication, the generic server's config; nothing runs) ->
// Config.Complete -> New (a Server; still nothing runs) -> Run (etcd, the
// registries, the handler chain, the controllers, serving).
package server

import (
	"context"
	"net"
	"strconv"
	"time"

	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/klog/v2"

	"github.com/meshplane/meshplane/core/internal/adminkubeconfig"
	"github.com/meshplane/meshplane/core/internal/authentication"
	"github.com/meshplane/meshplane/core/internal/handlerchain"
	"github.com/meshplane/meshplane/core/internal/openapi/lazyspec"
	"github.com/meshplane/meshplane/core/internal/typeconverter"
)

// Server is a Meshplane core; Run serves it.
type Server struct {
	config completedConfig
	store  *storageStage
}

// New returns the server of a completed config. It starts nothing.
func (c CompletedConfig) New() (*Server, error) {
	return &Server{config: *c.completedConfig}, nil
}

// Run starts etcd, builds the registries, authorizer, handlers and
// controllers on it, and serves until ctx is done, then shuts down
// gracefully.
func (s *Server) Run(ctx context.Context) error {
	defer s.Close()
	store, err := startStorage(s.config.Options)
	if err != nil {
		return err
	}
	s.store = store
	p, err := newParts(s.config, store.backend)
	if err != nil {
		return err
	}
	generic, err := p.newGenericServer()
	if err != nil {
		return err
	}
	opts := s.config.Options
	kubeconfig, err := adminkubeconfig.Write(opts.KubeconfigPath, s.config.ExternalURL, s.config.CAFile, s.config.Tokens)
	if err != nil {
		return err
	}
	klog.InfoS("Serving", "address", net.JoinHostPort(opts.BindAddress, strconv.Itoa(opts.SecurePort)), "kubeconfig", kubeconfig)
	p.signals.CompleteMuxAndDiscovery(ctx, generic.MuxAndDiscoveryCompleteSignals())
	return generic.PrepareRun().RunWithContext(ctx)
}

// Close releases etcd and the audit log.
func (s *Server) Close() {
	if s.config.auditFile != nil {
		_ = s.config.auditFile.Close()
		s.config.auditFile = nil
	}
	if s.store != nil {
		s.store.close()
		s.store = nil
	}
}

// newGenericServer completes the generic server's config with the
// authorizer, admission and handler chain, builds it and installs the
// APIs and the controllers' post-start hook.
func (p *parts) newGenericServer() (*genericapiserver.GenericAPIServer, error) {
	config := p.config.Generic
	config.Authentication.Authenticator = authentication.WithAnonymousPublic(p.withJWT(p.withServiceAccountTokens(config.Authentication.Authenticator)))
	config.Authorization.Authorizer = p.authz
	config.RuleResolver = p.rules
	config.AdmissionControl = p.admission
	p.signals = handlerchain.NewSignals(config)
	config.BuildHandlerChainFunc = p.buildHandlerChain
	config.AddHealthChecks(p.etcdCheck())
	config.SkipOpenAPIInstallation = true // lazyspec below: built on first request
	generic, err := config.Complete(nil).New("meshplane", genericapiserver.NewEmptyDelegate())
	if err != nil {
		return nil, err
	}
	settings := typeconverter.Settings{Admission: config.AdmissionControl,
		MinRequestTimeout: time.Duration(config.MinRequestTimeout) * time.Second, MaxRequestBodyBytes: config.MaxRequestBodyBytes}
	if err := installBuiltin(generic, p.storage, settings); err != nil {
		return nil, err
	}
	if err := generic.InstallAPIGroup(p.crdGroup); err != nil {
		return nil, err
	}
	if err := lazyspec.Install(generic.Handler.GoRestfulContainer, generic.Handler.NonGoRestfulMux, config.OpenAPIConfig, config.OpenAPIV3Config); err != nil {
		return nil, err
	}
	if err := generic.AddPostStartHook("meshplane-authentication", func(ctx genericapiserver.PostStartHookContext) error {
		return p.startJWT(ctx)
	}); err != nil {
		return nil, err
	}
	if err := generic.AddPostStartHook("meshplane-controllers", func(ctx genericapiserver.PostStartHookContext) error {
		return p.startControllers(ctx)
	}); err != nil {
		return nil, err
	}
	return generic, nil
}
