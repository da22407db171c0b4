package server

import (
	"context"
	"reflect"
	"time"

	apisv1alpha1 "github.com/kcp-dev/sdk/apis/apis/v1alpha1"
	corev1alpha1 "github.com/kcp-dev/sdk/apis/core/v1alpha1"
	tenancyv1alpha1 "github.com/kcp-dev/sdk/apis/tenancy/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsapiserver "k8s.io/apiextensions-apiserver/pkg/apiserver"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/conversion"
	"k8s.io/apiextensions-apiserver/pkg/registry/customresourcedefinition"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/group"
	tokenunion "k8s.io/apiserver/pkg/authentication/token/union"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/kube-openapi/pkg/validation/spec"

	apibindingadmission "github.com/meshplane/meshplane/core/internal/admission/apibinding"
	"github.com/meshplane/meshplane/core/internal/admission/crdnooverlap"
	"github.com/meshplane/meshplane/core/internal/admission/dynamic"
	logicalclusteradmission "github.com/meshplane/meshplane/core/internal/admission/logicalcluster"
	"github.com/meshplane/meshplane/core/internal/admission/namespacelifecycle"
	"github.com/meshplane/meshplane/core/internal/admission/permissionclaims"
	"github.com/meshplane/meshplane/core/internal/admission/reservedcrdgroups"
	"github.com/meshplane/meshplane/core/internal/admission/reservedmetadata"
	workspaceadmission "github.com/meshplane/meshplane/core/internal/admission/workspace"
	"github.com/meshplane/meshplane/core/internal/apiexport"
	builtinapi "github.com/meshplane/meshplane/core/internal/apis/builtin"
	"github.com/meshplane/meshplane/core/internal/authorization"
	"github.com/meshplane/meshplane/core/internal/authorization/requiredgroups"
	"github.com/meshplane/meshplane/core/internal/authorization/systemstatus"
	"github.com/meshplane/meshplane/core/internal/crd"
	"github.com/meshplane/meshplane/core/internal/handlerchain"
	"github.com/meshplane/meshplane/core/internal/impersonation"
	"github.com/meshplane/meshplane/core/internal/registry/builtin"
	"github.com/meshplane/meshplane/core/internal/sharding"
	"github.com/meshplane/meshplane/core/internal/storage/clusterstore"
	"github.com/meshplane/meshplane/core/internal/tenancy"
	"github.com/meshplane/meshplane/core/internal/tenancy/home"
	"github.com/meshplane/meshplane/core/internal/virtual/apiexportvw"
	"github.com/meshplane/meshplane/core/internal/virtual/apiresourceschemavw"
	"github.com/meshplane/meshplane/core/internal/virtual/lifecycle"
	"github.com/meshplane/meshplane/core/internal/virtual/myorgsvw"
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

	// serviceAccounts: the service-account token authenticator and the
	// informers it and the service account controller share.
	serviceAccounts *serviceAccounts
	jwt             *jwtParts
	quota           *quotaParts
	// mounts: workspace mounts (nil with the WorkspaceMounts gate off).
	mounts *mountParts
	// informers are the shared wildcard informers, started with the
	// controllers.
	informers informers
	// sharding: this server among the shards of an install.
	sharding *shardParts
	// signals: the server signals the handler chains read.
	signals *handlerchain.Signals
}

func newParts(c completedConfig, backend *clusterstore.Backend) (*parts, error) {
	p := &parts{config: c, backend: backend, externalURL: c.ExternalURL, consumers: apiexport.NewConsumers(), informers: informers{}}
	if err := p.newStorage(); err != nil {
		return nil, err
	}
	p.index = tenancy.NewIndex(p.reg.logicalClusters.Storage)
	p.types = &tenancy.Types{Index: p.index, Store: p.reg.workspaceTypes}
	if err := p.newSharding(); err != nil {
		return nil, err
	}
	// Exports and schemas of other shards come from their replicas.
	p.exports = &apiexport.Exports{Exports: sharding.WithReplicas(p.reg.exports, p.sharding.shards, sharding.APIExports), Bindings: p.reg.bindings,
		Schemas: sharding.WithReplicas(p.reg.schemas, p.sharding.shards, sharding.APIResourceSchemas), Consumers: p.consumers,
		Builtin: builtinGroups(), ServedIdentity: p.servedIdentity}
	p.newAuthorizer()
	if err := p.newMounts(); err != nil {
		return nil, err
	}
	if err := p.newServiceAccounts(); err != nil {
		return nil, err
	}
	// The service-account authenticator reads this informer too.
	p.informers[reflect.TypeOf(&corev1.ServiceAccount{})] = p.serviceAccounts.informer
	if err := p.newJWT(); err != nil {
		return nil, err
	}
	// A TokenReview answers with the token's audiences: the static tokens
	// and the JWT issuers' (whose own audiences their authenticators check)
	// are audience-agnostic (any API audience), as in kube-apiserver; a JWT
	// user is in system:authenticated there as on a request (withJWT).
	apiAudiences := c.ServiceAccountIssuer.APIAudiences()
	builtin.AddReviews(p.storage, builtin.WithDefaultAudiences(apiAudiences, tokenunion.New(
		authenticator.WrapAudienceAgnosticToken(apiAudiences, c.TokenAuthenticator), p.serviceAccounts.authenticator,
		authenticator.WrapAudienceAgnosticToken(apiAudiences, group.NewTokenGroupAdder(p.jwt.tokens, []string{user.AllAuthenticated})))),
		authorization.ForReviews(p.authz, authorization.NewBind(rbacSource(p.storage))), p.rules)
	namespaces := namespacelifecycle.New(p.namespaceGetter())
	namespaces.Deleting = p.clusterDeleting
	quotaAdmission, err := p.newQuota()
	if err != nil {
		return nil, err
	}
	p.admission = dynamic.WithReinvocation(admission.NewChainHandler(append([]admission.Interface{
		namespaces,
		// use of a type on another shard is asked there.
		workspaceadmission.New(p.types, p.index, p.acrossShards(p.authz)),
		apibindingadmission.New(sharding.Resolver(p.index.Resolve, p.sharding.shards), p.deepAcrossShards(authorization.NewBind(rbacSource(p.storage))),
			func(ctx context.Context, cluster, name string) bool {
				_, err := p.exports.Export(ctx, cluster, name)
				return err == nil
			}),
		reservedcrdgroups.New(),
		crdnooverlap.New(p.crdIndex.BoundIn),
		reservedmetadata.New(p.index.Path),
		apiexportvw.NewAdmission(p.exports),
		logicalclusteradmission.New(),
		permissionclaims.New(p.consumers),
	}, append(append(p.mountAdmission(), p.dynamicAdmission()...), quotaAdmission)...)...)) // quota last, as in kube-apiserver
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
	crd.AllowDotlessGroups(p.crds.Store)
	p.crdIndex = crd.NewIndex(p.crds)
	return nil
}

// newAuthorizer builds the authorizer chain: the home workspace rule and
// the virtual workspaces' authorizers first, then the plain chain.
func (p *parts) newAuthorizer() {
	var workspaces authorization.Workspaces = p.index
	if shards := p.sharding.shards; shards != nil {
		workspaces = workspacesOfShard{Index: p.index, others: shards.Others()}
	}
	p.authz, p.rules = authorization.New(rbacSource(p.storage), workspaces, p.config.AuthorizationWebhook,
		// First: refusals of privileged impersonation win over any grant.
		authorization.Fixed(impersonation.Authorizer),
		// The status only the system writes, whatever RBAC grants.
		authorization.Fixed(systemstatus.Authorizer),
		// "My organizations": any authenticated user reads there, the
		// webhook's answer narrowing what is shown.
		authorization.Fixed(myorgsvw.Authorizer{}),
		authorization.Fixed(authorizer.AuthorizerFunc(home.Authorizer)),
		func(full, _ authorizer.Authorizer) authorizer.Authorizer {
			return &apiexportvw.Authorizer{Exports: p.exports, RBAC: p.acrossShards(full)}
		},
		authorization.Fixed(p.maximalPermissionPolicy()),
		func(_, plain authorizer.Authorizer) authorizer.Authorizer {
			return lifecycle.Authorizer{RBAC: p.acrossShards(plain), Clusters: p.index, Permissions: p.lifecyclePermissions}
		},
		func(_, plain authorizer.Authorizer) authorizer.Authorizer {
			return apiresourceschemavw.Authorizer{RBAC: plain}
		},
		// Last of the layers: virtual workspace requests are decided above
		// (kcp's virtual workspaces act with a system identity).
		authorization.Fixed(requiredgroups.Authorizer{LogicalCluster: p.index.Get}))
}

// servedIdentity returns the identity under which consumer serves
// group/resource ("" for its own CRD and for the built-in resources, which
// a binding of them never replaces).
func (p *parts) servedIdentity(consumer, group, resource string) (string, bool) {
	if p.exports.Builtin[group] && p.builtinResource(schema.GroupResource{Group: group, Resource: resource}) {
		return "", true
	}
	c := p.crdIndex.Get(consumer, resource+"."+group)
	if c == nil {
		return "", false
	}
	return c.Annotations[crd.IdentityAnnotation], true
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
		BuiltinResource:   p.builtinResource,
		MinRequestTimeout: time.Duration(generic.MinRequestTimeout) * time.Second,
	}
	return nil
}

// deepAcrossShards is acrossShards with deep reviews: the other shard
// answers with the cluster's RBAC only, as local does here (the bind
// check).
func (p *parts) deepAcrossShards(local authorizer.Authorizer) authorizer.Authorizer {
	a := p.acrossShards(local).(sharding.Authorizer)
	a.Deep = true
	return a
}

// acrossShards lets local decide in this shard's clusters and asks the
// shard holding any other cluster (a SubjectAccessReview there).
func (p *parts) acrossShards(local authorizer.Authorizer) authorizer.Authorizer {
	return sharding.Authorizer{Local: local, Shards: p.sharding.shards, IsLocal: func(cluster string) bool {
		_, ok := p.index.Get(cluster)
		return ok
	}}
}

// workspacesOfShard are this shard's workspaces; it knows the clusters the
// other shards hold (authorization.Elsewhere).
type workspacesOfShard struct {
	*tenancy.Index
	others *sharding.Others
}

func (w workspacesOfShard) Elsewhere(cluster string) bool {
	_, ok := w.others.ShardOf(cluster)
	return ok
}

// Sharded reports whether other shards are known (authorization.Sharded).
func (w workspacesOfShard) Sharded() bool {
	return len(w.others.Count(sharding.LogicalClusters)) > 0
}
