// Package server assembles the Meshplane core: etcd, storage partitioned by
// logical cluster, the built-in APIs, authentication and authorization, and
// the generic apiserver that serves them.
package server

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	apisv1alpha1 "github.com/kcp-dev/sdk/apis/apis/v1alpha1"
	corev1alpha1 "github.com/kcp-dev/sdk/apis/core/v1alpha1"
	tenancyv1alpha1 "github.com/kcp-dev/sdk/apis/tenancy/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsapiserver "k8s.io/apiextensions-apiserver/pkg/apiserver"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/conversion"
	"k8s.io/apiextensions-apiserver/pkg/registry/customresourcedefinition"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	openapinamer "k8s.io/apiserver/pkg/endpoints/openapi"
	"k8s.io/apiserver/pkg/registry/rest"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/apiserver/pkg/server/healthz"
	genericoptions "k8s.io/apiserver/pkg/server/options"
	"k8s.io/apiserver/pkg/util/compatibility"
	"k8s.io/klog/v2"

	"github.com/meshplane/meshplane/core/pkg/adminkubeconfig"
	apibindingadmission "github.com/meshplane/meshplane/core/pkg/admission/apibinding"
	"github.com/meshplane/meshplane/core/pkg/admission/namespacelifecycle"
	workspaceadmission "github.com/meshplane/meshplane/core/pkg/admission/workspace"
	builtinapi "github.com/meshplane/meshplane/core/pkg/apis/builtin"
	"github.com/meshplane/meshplane/core/pkg/auditlog"
	"github.com/meshplane/meshplane/core/pkg/authentication"
	"github.com/meshplane/meshplane/core/pkg/authorization"
	"github.com/meshplane/meshplane/core/pkg/certs"
	"github.com/meshplane/meshplane/core/pkg/clusters"
	"github.com/meshplane/meshplane/core/pkg/controllers/defaultapibindings"
	"github.com/meshplane/meshplane/core/pkg/controllers/namespace"
	"github.com/meshplane/meshplane/core/pkg/crd"
	"github.com/meshplane/meshplane/core/pkg/discovery"
	"github.com/meshplane/meshplane/core/pkg/embeddedetcd"
	"github.com/meshplane/meshplane/core/pkg/openapi/clusterspec"
	"github.com/meshplane/meshplane/core/pkg/openapi/definitions"
	"github.com/meshplane/meshplane/core/pkg/registry/builtin"
	"github.com/meshplane/meshplane/core/pkg/server/options"
	"github.com/meshplane/meshplane/core/pkg/storage/clusterstore"
	"github.com/meshplane/meshplane/core/pkg/tenancy/home"
	"github.com/meshplane/meshplane/core/pkg/virtual/apiexportvw"
	"github.com/meshplane/meshplane/core/pkg/virtual/lifecycle"
)

// Server is a running Meshplane core.
type Server struct {
	opts       *options.Completed
	etcd       *embeddedetcd.Server
	backend    *clusterstore.Backend
	generic    *genericapiserver.GenericAPIServer
	kubeconfig string
	auditFile  *os.File
}

// New builds the server: it starts etcd and prepares everything to serve.
func New(opts *options.Completed) (*Server, error) {
	s := &Server{opts: opts}
	if err := os.MkdirAll(opts.RootDirectory, 0o755); err != nil {
		return nil, err
	}
	if err := applyFeatureGates(opts.FeatureGates); err != nil {
		return nil, err
	}
	endpoints := opts.EtcdServers
	if len(endpoints) == 0 {
		e, err := embeddedetcd.Start(opts.RootDirectory, opts.EmbeddedEtcdClientPort, opts.EmbeddedEtcdPeerPort, opts.EmbeddedEtcdWALSizeBytes)
		if err != nil {
			return nil, err
		}
		s.etcd = e
		endpoints = []string{e.ClientURL}
	}
	backend, err := clusterstore.NewBackend(endpoints, "/registry", 5*time.Minute)
	if err != nil {
		s.Close()
		return nil, err
	}
	s.backend = backend
	if err := s.build(); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

func (s *Server) build() error {
	opts := s.opts
	host, _, _ := net.SplitHostPort(opts.ExternalAddress)
	caFile, err := certs.Ensure(opts.RootDirectory, []string{host, opts.BindAddress})
	if err != nil {
		return fmt.Errorf("certificates: %w", err)
	}
	tokens, err := adminkubeconfig.LoadOrCreateTokens(opts.RootDirectory)
	if err != nil {
		return err
	}

	builtinOpts := &clusterstore.RESTOptionsGetter{
		Backend: s.backend, Scheme: builtinapi.Scheme, Serializer: builtinapi.Codecs,
		MediaType: "application/vnd.kubernetes.protobuf", Prefixes: builtin.StoragePrefixes(), Cache: true,
		MediaTypes: map[string]string{tenancyv1alpha1.SchemeGroupVersion.Group: "application/json", corev1alpha1.SchemeGroupVersion.Group: "application/json",
			apisv1alpha1.SchemeGroupVersion.Group: "application/json"},
		StorageVersions: builtin.StorageVersions(),
	}
	storage, err := builtin.NewStorage(builtinOpts)
	if err != nil {
		return err
	}

	authn, tokenAuthn, err := authentication.New(authentication.Config{
		Tokens: map[string]*user.DefaultInfo{
			tokens.KCPAdmin:   {Name: "kcp-admin", Groups: []string{authentication.KCPAdminGroup}},
			tokens.ShardAdmin: {Name: "shard-admin", Groups: []string{authentication.MastersGroup}},
		},
		TokenAuthFile: opts.TokenAuthFile,
		ClientCAFile:  opts.ClientCAFile,
	})
	if err != nil {
		return err
	}
	t := newTenancy(storage, s.backend, "https://"+opts.ExternalAddress)
	// The CRD registry and index come first: API sharing serves through them.
	crdOpts := &clusterstore.RESTOptionsGetter{
		Backend: s.backend, Scheme: apiextensionsapiserver.Scheme, Serializer: apiextensionsapiserver.Codecs,
		MediaType: "application/json",
	}
	crds, err := customresourcedefinition.NewREST(apiextensionsapiserver.Scheme, crdOpts)
	if err != nil {
		return err
	}
	crdIndex := crd.NewIndex(crds)
	apis := newAPIs(storage, t.index, crdIndex)
	authz, rules := authorization.New(rbacSource(storage), t,
		authorization.Fixed(authorizer.AuthorizerFunc(home.Authorizer)),
		func(full, _ authorizer.Authorizer) authorizer.Authorizer { return &apiexportvw.Authorizer{Exports: apis, RBAC: full} },
		func(_, plain authorizer.Authorizer) authorizer.Authorizer {
			return lifecycle.Authorizer{RBAC: plain, Clusters: t.index}
		})
	builtin.AddReviews(storage, tokenAuthn, authz, rules)

	config := genericapiserver.NewConfig(builtinapi.Codecs)
	config.EffectiveVersion = effectiveVersion{compatibility.DefaultBuildEffectiveVersion()}
	serving := genericoptions.NewSecureServingOptions()
	serving.BindAddress = net.ParseIP(opts.BindAddress)
	serving.BindPort = opts.SecurePort
	serving.ServerCert.CertKey.CertFile = opts.RootDirectory + "/" + certs.ServingCert
	serving.ServerCert.CertKey.KeyFile = opts.RootDirectory + "/" + certs.ServingKey
	if err := serving.WithLoopback().ApplyTo(&config.SecureServing, &config.LoopbackClientConfig); err != nil {
		return fmt.Errorf("serving: %w", err)
	}
	config.ExternalAddress = opts.ExternalAddress
	if opts.AuditLogPath != "" {
		backend, evaluator, f, err := auditlog.New(opts.AuditLogPath)
		if err != nil {
			return err
		}
		s.auditFile = f
		config.AuditBackend, config.AuditPolicyRuleEvaluator = backend, evaluator
	}
	config.Authentication.Authenticator = authn
	config.Authorization.Authorizer = authz
	config.RuleResolver = rules
	config.AdmissionControl = admission.NewChainHandler(
		namespacelifecycle.New(namespaceGetter(storage)),
		workspaceadmission.New(t.types, t.index, authz),
		apibindingadmission.New(t.index.Resolve, authz),
	)

	namer := openapinamer.NewDefinitionNamer(builtinapi.Scheme, apiextensionsapiserver.Scheme)
	config.OpenAPIConfig = genericapiserver.DefaultOpenAPIConfig(definitions.GetOpenAPIDefinitions, namer)
	config.OpenAPIConfig.Info.Title = "Meshplane"
	config.OpenAPIV3Config = genericapiserver.DefaultOpenAPIV3Config(definitions.GetOpenAPIDefinitions, namer)
	config.OpenAPIV3Config.Info.Title = "Meshplane"

	converters, err := conversion.NewCRConverterFactory(nil, nil)
	if err != nil {
		return err
	}
	crdHandler := &crd.Handler{
		Index: crdIndex,
		Builder: &crd.Builder{Decorator: s.backend.Decorator, CachedDecorator: s.backend.CachedDecorator,
			Authorizer: authz, Converters: converters, MaxBodyBytes: config.MaxRequestBodyBytes},
		Admission:         config.AdmissionControl,
		Builtin:           builtinGroups(),
		MinRequestTimeout: time.Duration(config.MinRequestTimeout) * time.Second,
	}
	config.BuildHandlerChainFunc = func(apiHandler http.Handler, c *genericapiserver.Config) http.Handler {
		crdHandler.Next = apiHandler
		openapi := &clusterspec.Handler{CRDs: crdIndex, Static: apiHandler, Next: crdHandler}
		api := &discovery.Handler{CRDs: apis.discoveredCRDs, Static: apiHandler, Next: openapi}
		homes := &home.Handler{Clients: t.clients, Bindings: t.bindings, Index: t.index, Types: t.types,
			ExternalURL: t.externalURL, Codecs: builtinapi.Codecs, Next: api}
		chain := genericapiserver.DefaultBuildHandlerChain(withClusterChecks(homes), c)
		chain = clusters.WithClusterPath(chain, builtinapi.Codecs, t.index.Resolve)
		return apiexportvw.WithVirtualWorkspace(lifecycle.WithVirtualWorkspaces(chain), apis)
	}
	config.AddHealthChecks(healthz.NamedCheck("etcd", func(r *http.Request) error { return s.backend.Ready(r.Context()) }))

	generic, err := config.Complete(nil).New("meshplane", genericapiserver.NewEmptyDelegate())
	if err != nil {
		return err
	}
	s.generic = generic
	if err := installBuiltin(generic, storage); err != nil {
		return err
	}
	builtinContents := namespacedContents(storage)
	crdInfo, err := installCRDs(generic, crds)
	if err != nil {
		return err
	}
	crdHandler.Builder.StaticOpenAPI = crdInfo.StaticOpenAPISpec
	crdController := &crd.Controller{CRDs: crds, Status: customresourcedefinition.NewStatusREST(apiextensionsapiserver.Scheme, crds), Handler: crdHandler}
	nsController := &namespace.Controller{
		Namespaces: storage[corev1.SchemeGroupVersion]["namespaces"].(namespaceStorage),
		Finalize:   storage[corev1.SchemeGroupVersion]["namespaces/finalize"].(rest.Updater),
		Contents: func(cluster string) []namespace.Content {
			out := builtinContents
			for _, c := range crdHandler.NamespacedContents(cluster) {
				out = append(out, c)
			}
			return out
		},
	}
	if err := generic.AddPostStartHook("meshplane-controllers", func(ctx genericapiserver.PostStartHookContext) error {
		go crdIndex.Run(ctx)
		go crdController.Run(ctx)
		go nsController.Run(ctx)
		t.purgeExtra = crdPrefixes(crdIndex)
		apis.start(ctx, t.clients.Namespaces, t.externalURL, crdHandler)
		// Start-up (OpenAPI specs, registries) leaves garbage behind; hand
		// it back to the OS once, so idle memory is what serving needs.
		go func() {
			select {
			case <-time.After(2 * time.Second):
				debug.FreeOSMemory()
			case <-ctx.Done():
			}
		}()
		go (&defaultapibindings.Controller{Clients: t.clients, Index: t.index, Types: t.types, Bindings: apis.bindings}).Run(ctx)
		return t.start(ctx)
	}); err != nil {
		return err
	}

	base := "https://" + opts.ExternalAddress
	s.kubeconfig, err = adminkubeconfig.Write(opts.KubeconfigPath, base, caFile, tokens)
	return err
}

func namespaceGetter(storage builtin.Storage) namespacelifecycle.GetNamespace {
	getter := storage[corev1.SchemeGroupVersion]["namespaces"].(rest.Getter)
	return func(ctx context.Context, name string) (*corev1.Namespace, error) {
		// The watch cache answers almost always; a namespace created a
		// moment ago may not be in it yet, so a miss asks etcd.
		obj, err := getter.Get(ctx, name, &metav1.GetOptions{ResourceVersion: "0"})
		if apierrors.IsNotFound(err) {
			obj, err = getter.Get(ctx, name, &metav1.GetOptions{})
		}
		if err != nil {
			return nil, err
		}
		return obj.(*corev1.Namespace), nil
	}
}

func installBuiltin(s *genericapiserver.GenericAPIServer, storage builtin.Storage) error {
	groups := map[string]*genericapiserver.APIGroupInfo{}
	var order []string
	for _, gv := range builtinapi.GroupVersions {
		info, ok := groups[gv.Group]
		if !ok {
			i := genericapiserver.NewDefaultAPIGroupInfo(gv.Group, builtinapi.Scheme, builtinapi.ParameterCodec, builtinapi.Codecs)
			info = &i
			groups[gv.Group] = info
			order = append(order, gv.Group)
		}
		info.VersionedResourcesStorageMap[gv.Version] = storage[gv]
	}
	for _, g := range order {
		if g == "" {
			if err := s.InstallLegacyAPIGroup(genericapiserver.DefaultLegacyAPIPrefix, groups[g]); err != nil {
				return fmt.Errorf("installing core/v1: %w", err)
			}
			continue
		}
		if err := s.InstallAPIGroup(groups[g]); err != nil {
			return fmt.Errorf("installing %s: %w", g, err)
		}
	}
	return nil
}

type namespaceStorage interface {
	rest.Lister
	rest.Watcher
	rest.Getter
	rest.GracefulDeleter
}

// namespacedContents lists the built-in registries of namespaced objects.
func namespacedContents(storage builtin.Storage) []namespace.Content {
	var out []namespace.Content
	for _, byPath := range storage {
		for path, st := range byPath {
			if strings.Contains(path, "/") {
				continue
			}
			scoper, ok := st.(rest.Scoper)
			content, ok2 := st.(namespace.Content)
			if ok && ok2 && scoper.NamespaceScoped() {
				out = append(out, content)
			}
		}
	}
	return out
}

func builtinGroups() map[string]bool {
	out := map[string]bool{apiextensionsv1.GroupName: true}
	for _, gv := range builtinapi.GroupVersions {
		out[gv.Group] = true
	}
	return out
}

func installCRDs(s *genericapiserver.GenericAPIServer, crds *customresourcedefinition.REST) (*genericapiserver.APIGroupInfo, error) {
	info := genericapiserver.NewDefaultAPIGroupInfo("apiextensions.k8s.io", apiextensionsapiserver.Scheme,
		metav1.ParameterCodec, apiextensionsapiserver.Codecs)
	info.VersionedResourcesStorageMap["v1"] = map[string]rest.Storage{
		"customresourcedefinitions":        crds,
		"customresourcedefinitions/status": customresourcedefinition.NewStatusREST(apiextensionsapiserver.Scheme, crds),
	}
	return &info, s.InstallAPIGroup(&info)
}

// Run serves until ctx is done, then shuts down gracefully.
func (s *Server) Run(ctx context.Context) error {
	defer s.Close()
	klog.InfoS("Serving", "address", net.JoinHostPort(s.opts.BindAddress, strconv.Itoa(s.opts.SecurePort)),
		"kubeconfig", s.kubeconfig)
	return s.generic.PrepareRun().RunWithContext(ctx)
}

// Close releases etcd and the audit log.
func (s *Server) Close() {
	if s.auditFile != nil {
		_ = s.auditFile.Close()
		s.auditFile = nil
	}
	if s.backend != nil {
		_ = s.backend.Close()
		s.backend = nil
	}
	if s.etcd != nil {
		s.etcd.Close()
		s.etcd = nil
	}
}
