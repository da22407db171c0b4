package server

import (
	"time"

	apisv1alpha1 "github.com/kcp-dev/sdk/apis/apis/v1alpha1"
	corev1alpha1 "github.com/kcp-dev/sdk/apis/core/v1alpha1"
	tenancyv1alpha1 "github.com/kcp-dev/sdk/apis/tenancy/v1alpha1"
	apiextensionsapiserver "k8s.io/apiextensions-apiserver/pkg/apiserver"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/conversion"
	"k8s.io/apiextensions-apiserver/pkg/registry/customresourcedefinition"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/kube-openapi/pkg/validation/spec"

	apibindingadmission "github.com/meshplane/meshplane/core/pkg/admission/apibinding"
	"github.com/meshplane/meshplane/core/pkg/admission/namespacelifecycle"
	workspaceadmission "github.com/meshplane/meshplane/core/pkg/admission/workspace"
	"github.com/meshplane/meshplane/core/pkg/apiexport"
	builtinapi "github.com/meshplane/meshplane/core/pkg/apis/builtin"
	"github.com/meshplane/meshplane/core/pkg/authorization"
	"github.com/meshplane/meshplane/core/pkg/crd"
	"github.com/meshplane/meshplane/core/pkg/registry/builtin"
	"github.com/meshplane/meshplane/core/pkg/storage/clusterstore"
	"github.com/meshplane/meshplane/core/pkg/tenancy"
	"github.com/meshplane/meshplane/core/pkg/tenancy/home"
	"github.com/meshplane/meshplane/core/pkg/virtual/apiexportvw"
	"github.com/meshplane/meshplane/core/pkg/virtual/lifecycle"
)

// parts are what the server is assembled from once etcd runs: the
// registries, the indexes over them, the authorizer, admission and the
// custom resource handler. Each is built once, complete; nothing is
// patched in later.
type parts struct {
	config  completedConfig
	backend *clusterstore.Backend

	storage     builtin.Storage
	reg         *registries
	crds        *customresourcedefinition.REST
	crdIndex    *crd.Index
	index       *tenancy.Index
	types       *tenancy.Types
	consumers   *apiexport.Consumers
	exports     *apiexport.Exports
	authz       authorizer.Authorizer
	rules       authorizer.RuleResolver
	admission   admission.Interface
	crdGroup    *genericapiserver.APIGroupInfo
	crdHandler  *crd.Handler
	externalURL string
}

func newParts(c completedConfig, backend *clusterstore.Backend) (*parts, error) {
	p := &parts{config: c, backend: backend, externalURL: c.ExternalURL, consumers: apiexport.NewConsumers()}
	if err := p.newStorage(); err != nil {
		return nil, err
	}
	p.index = tenancy.NewIndex(p.reg.logicalClusters.Storage)
	p.types = &tenancy.Types{Index: p.index, Store: p.reg.workspaceTypes}
	p.exports = &apiexport.Exports{Exports: p.reg.exports, Bindings: p.reg.bindings, Schemas: p.reg.schemas, Consumers: p.consumers}
	p.newAuthorizer()
	builtin.AddReviews(p.storage, c.TokenAuthenticator, p.authz, p.rules)
	p.admission = admission.NewChainHandler(
		namespacelifecycle.New(namespaceGetter(p.reg.namespaceStore)),
		workspaceadmission.New(p.types, p.index, p.authz),
		apibindingadmission.New(p.index.Resolve, p.authz),
	)
	return p, p.newCRDHandler()
}

// newStorage builds the built-in registries and the CRD registry and
// index (API sharing serves through them).
func (p *parts) newStorage() error {
	storage, err := builtin.NewStorage(&clusterstore.RESTOptionsGetter{
		Backend: p.backend, Scheme: builtinapi.Scheme, Serializer: builtinapi.Codecs,
		MediaType: "application/vnd.kubernetes.protobuf", Prefixes: builtin.StoragePrefixes(), Cache: true,
		MediaTypes: map[string]string{tenancyv1alpha1.SchemeGroupVersion.Group: "application/json", corev1alpha1.SchemeGroupVersion.Group: "application/json",
			apisv1alpha1.SchemeGroupVersion.Group: "application/json"},
		StorageVersions: builtin.StorageVersions(),
	})
	if err != nil {
		return err
	}
	p.storage = storage
	if p.reg, err = newRegistries(storage); err != nil {
		return err
	}
	p.crds, err = customresourcedefinition.NewREST(apiextensionsapiserver.Scheme, &clusterstore.RESTOptionsGetter{
		Backend: p.backend, Scheme: apiextensionsapiserver.Scheme, Serializer: apiextensionsapiserver.Codecs,
		MediaType: "application/json",
	})
	if err != nil {
		return err
	}
	p.crdIndex = crd.NewIndex(p.crds)
	return nil
}

// newAuthorizer builds the authorizer chain: the home workspace rule and
// the virtual workspaces' authorizers first, then the plain chain.
func (p *parts) newAuthorizer() {
	p.authz, p.rules = authorization.New(rbacSource(p.storage), p.index,
		authorization.Fixed(authorizer.AuthorizerFunc(home.Authorizer)),
		func(full, _ authorizer.Authorizer) authorizer.Authorizer {
			return &apiexportvw.Authorizer{Exports: p.exports, RBAC: full}
		},
		func(_, plain authorizer.Authorizer) authorizer.Authorizer {
			return lifecycle.Authorizer{RBAC: plain, Clusters: p.index}
		})
}

// newCRDHandler builds the handler of custom and bound resources. Its
// OpenAPI definitions are the apiextensions group's, which the generic
// server computes when it installs crdGroup.
func (p *parts) newCRDHandler() error {
	converters, err := conversion.NewCRConverterFactory(nil, nil)
	if err != nil {
		return err
	}
	p.crdGroup = newCRDGroup(p.crds)
	group := p.crdGroup
	generic := p.config.Generic
	p.crdHandler = &crd.Handler{
		Index: p.crdIndex,
		Builder: &crd.Builder{Decorator: p.backend.Decorator, CachedDecorator: p.backend.CachedDecorator,
			StaticOpenAPIFrom: func() map[string]*spec.Schema { return group.StaticOpenAPISpec },
			Authorizer:        p.authz, Converters: converters, MaxBodyBytes: generic.MaxRequestBodyBytes},
		Admission:         p.admission,
		Builtin:           builtinGroups(),
		MinRequestTimeout: time.Duration(generic.MinRequestTimeout) * time.Second,
	}
	return nil
}
