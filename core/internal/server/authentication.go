package server

import (
	"context"
	"fmt"
	"reflect"

	tenancyv1alpha1 "github.com/kcp-dev/sdk/apis/tenancy/v1alpha1"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/group"
	"k8s.io/apiserver/pkg/authentication/request/bearertoken"
	"k8s.io/apiserver/pkg/authentication/request/union"
	tokenunion "k8s.io/apiserver/pkg/authentication/token/union"
	"k8s.io/client-go/tools/cache"

	"github.com/meshplane/meshplane/core/internal/authentication/jwt"
	"github.com/meshplane/meshplane/core/internal/authentication/workspaceauth"
	"github.com/meshplane/meshplane/core/internal/registry/wildcard"
	"github.com/meshplane/meshplane/core/internal/sharding"
)

// loadAuthenticationConfig reads --authentication-config (a bad file stops
// the start); its authenticators run from startJWT.
func (c *Config) loadAuthenticationConfig() error {
	if c.Options.AuthenticationConfig == "" {
		return nil
	}
	f, err := jwt.NewFile(c.Options.AuthenticationConfig, c.jwtOptions())
	if err != nil {
		return err
	}
	c.JWT = f
	return nil
}

// jwtOptions: JWT issuers may not claim the service-account issuers.
func (c *Config) jwtOptions() jwt.Options {
	return jwt.Options{DisallowedIssuers: c.Options.ServiceAccountIssuers, CacheTTL: jwt.CacheTTL}
}

// jwtParts are the JWT authenticators: the global ones of
// --authentication-config and those of the workspace types.
type jwtParts struct {
	workspaces *workspaceauth.Index
	configs    cache.SharedIndexInformer
	tokens     authenticator.Token
}

// newJWT builds the per-workspace-type index on the shared WorkspaceType
// informer and an informer of WorkspaceAuthenticationConfigurations.
func (p *parts) newJWT() error {
	gv, res := tenancyv1alpha1.SchemeGroupVersion, "workspaceauthenticationconfigurations"
	st, ok := p.storage[gv][res].(wildcard.Storage)
	if !ok {
		return fmt.Errorf("no registry for %s %s", gv, res)
	}
	j := &jwtParts{configs: wildcard.NewInformer(st, &tenancyv1alpha1.WorkspaceAuthenticationConfiguration{})}
	p.informers[reflect.TypeOf(&tenancyv1alpha1.WorkspaceAuthenticationConfiguration{})] = j.configs
	types := p.informers.of(p.reg.workspaceTypes.Storage, &tenancyv1alpha1.WorkspaceType{})
	local := workspaceauth.FromIndexer(types.GetIndexer())
	getType, clusters := local, workspaceauth.Clusters(p.index)
	if shards := p.sharding.shards; shards != nil {
		// A type on another shard (an org's type in root:orgs for an org on
		// shard b) is read from its replica.
		others := shards.Others()
		getType = func(cluster, name string) (*tenancyv1alpha1.WorkspaceType, bool) {
			if wt, ok := local(cluster, name); ok {
				return wt, true
			}
			obj, _, ok := others.Get(sharding.WorkspaceTypes, cluster, name)
			if !ok {
				return nil, false
			}
			wt, ok := obj.(*tenancyv1alpha1.WorkspaceType)
			return wt, ok
		}
		clusters = resolveAcrossShards{Clusters: p.index, resolve: sharding.Resolver(p.index.Resolve, shards)}
	}
	j.workspaces = workspaceauth.New(clusters, getType, p.config.jwtOptions())
	j.tokens = j.workspaces
	if p.config.JWT != nil {
		j.tokens = tokenunion.New(p.config.JWT, j.workspaces)
	}
	p.jwt = j
	return nil
}

// withJWT adds the JWT bearer tokens to the request authenticator, after
// the others (as kube-apiserver orders them).
func (p *parts) withJWT(next authenticator.Request) authenticator.Request {
	return union.New(next, group.NewAuthenticatedGroupAdder(bearertoken.New(p.jwt.tokens)))
}

// startJWT starts the authenticators (a post-start hook).
func (p *parts) startJWT(ctx context.Context) error {
	if p.config.JWT != nil {
		if err := p.config.JWT.Start(ctx); err != nil {
			return err
		}
	}
	sources := []workspaceauth.EventSource{p.jwt.configs}
	if shards := p.sharding.shards; shards != nil {
		sources = append(sources, shards.Others().Source(sharding.AuthConfigs))
	}
	return p.jwt.workspaces.Start(ctx, sources...)
}

// resolveAcrossShards finds this shard's logical clusters and resolves
// workspace paths on every shard.
type resolveAcrossShards struct {
	workspaceauth.Clusters
	resolve func(path string) (string, bool)
}

func (r resolveAcrossShards) Resolve(path string) (string, bool) { return r.resolve(path) }
