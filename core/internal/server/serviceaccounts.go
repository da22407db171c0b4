package server

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/request/bearertoken"
	"k8s.io/apiserver/pkg/authentication/request/union"
	"k8s.io/client-go/tools/cache"

	"github.com/meshplane/meshplane/core/internal/clusters"
	"github.com/meshplane/meshplane/core/internal/controllers/clusterroleaggregation"
	serviceaccountcontroller "github.com/meshplane/meshplane/core/internal/controllers/serviceaccount"
	"github.com/meshplane/meshplane/core/internal/registry/builtin"
	"github.com/meshplane/meshplane/core/internal/registry/wildcard"
	"github.com/meshplane/meshplane/core/internal/serviceaccount"
	"github.com/meshplane/meshplane/core/internal/sharding"
	"github.com/meshplane/meshplane/core/internal/virtual/apiexportvw"
	"github.com/meshplane/meshplane/core/internal/virtual/apiresourceschemavw"
	"github.com/meshplane/meshplane/core/internal/virtual/lifecycle"
)

// loadServiceAccountKeys generates the signing key on first start (when
// --service-account-signing-key-file is the default) and loads the keys.
func (c *Config) loadServiceAccountKeys() error {
	opts := c.Options
	if err := serviceaccount.EnsureSigningKey(opts.ServiceAccountSigningKeyFile); err != nil {
		return err
	}
	keys, err := serviceaccount.LoadKeys(opts.ServiceAccountSigningKeyFile, opts.ServiceAccountKeyFiles)
	if err != nil {
		return err
	}
	c.ServiceAccountKeys = keys
	c.ServiceAccountIssuer = serviceaccount.NewIssuer(keys, opts.ServiceAccountIssuers[0], nil)
	return nil
}

// serviceAccounts are the token authenticator and the informers it
// reads, shared with the service account controller.
type serviceAccounts struct {
	caPEM         []byte
	informer      cache.SharedIndexInformer
	tokenSecrets  cache.SharedIndexInformer
	authenticator *serviceaccount.Authenticator
}

// newServiceAccounts builds the token authenticator and adds the
// TokenRequest subresource.
func (p *parts) newServiceAccounts() error {
	caPEM, err := p.rootCA()
	if err != nil {
		return err
	}
	sas, secrets := p.reg.serviceAccounts, p.reg.secrets
	s := &serviceAccounts{
		caPEM:        caPEM,
		informer:     wildcard.NewInformer(sas.Storage, &corev1.ServiceAccount{}),
		tokenSecrets: wildcard.NewFilteredInformer(secrets.Storage, &corev1.Secret{}, "type="+string(corev1.SecretTypeServiceAccountToken)),
	}
	// A token of a cluster on another shard (shards of an install share
	// the signing key) is checked against its objects there.
	lookup := &serviceaccount.InformerLookup{ServiceAccounts: s.informer, Secrets: s.tokenSecrets,
		GetServiceAccount: func(ctx context.Context, cluster, namespace, name string) (*corev1.ServiceAccount, error) {
			if c, ok, err := p.holding(ctx, cluster); ok || err != nil {
				if err != nil {
					return nil, err
				}
				return c.ServiceAccounts.Get(ctx, cluster, namespace, name)
			}
			return sas.Get(ctx, cluster, namespace, name)
		},
		GetSecret: func(ctx context.Context, cluster, namespace, name string) (*corev1.Secret, error) {
			if c, ok, err := p.holding(ctx, cluster); ok || err != nil {
				if err != nil {
					return nil, err
				}
				return c.Secrets.Get(ctx, cluster, namespace, name)
			}
			return secrets.Get(ctx, cluster, namespace, name)
		}}
	c := p.config
	s.authenticator = serviceaccount.NewAuthenticator(c.ServiceAccountKeys, c.Options.ServiceAccountIssuers,
		c.ServiceAccountIssuer.APIAudiences(), p.tokenClusterAllowed, lookup)
	p.serviceAccounts = s
	issuer := c.ServiceAccountIssuer
	builtin.AddTokenRequest(p.storage, func(b builtin.TokenBinding) (string, []string, time.Time, error) {
		sa := b.ServiceAccount
		sub := serviceaccount.Subject{Cluster: b.Cluster, Namespace: sa.Namespace, Name: sa.Name, UID: string(sa.UID)}
		if b.Secret != nil {
			sub.SecretName, sub.SecretUID = b.Secret.Name, string(b.Secret.UID)
		}
		audiences := b.Audiences
		if len(audiences) == 0 {
			audiences = issuer.APIAudiences()
		}
		token, exp, err := issuer.Bound(sub, audiences, b.Expiration, time.Now())
		return token, audiences, exp, err
	}, c.Options.ServiceAccountMaxTokenExpiration)
	return nil
}

// tokenClusterAllowed says whether a service-account token of cluster may
// authenticate a request: in that cluster, and in the virtual workspaces
// that serve it (the APIExport virtual workspace of an export of that
// cluster, the lifecycle virtual workspaces of a WorkspaceType there).
func (p *parts) tokenClusterAllowed(ctx context.Context, cluster string) bool {
	if c, ok := clusters.From(ctx); ok && c == cluster {
		return true
	}
	if _, ok := apiresourceschemavw.From(ctx); ok {
		return true // RBAC in the consumer sees other clusters' service accounts by their global name
	}
	if t, ok := apiexportvw.From(ctx); ok {
		c, ok := p.resolveAnywhere(t.Cluster)
		return ok && c == cluster
	}
	if t, ok := lifecycle.From(ctx); ok {
		if i := strings.LastIndex(t.ID, ":"); i > 0 {
			c, ok := p.resolveAnywhere(t.ID[:i])
			return ok && c == cluster
		}
	}
	return false
}

// resolveAnywhere resolves a workspace path or logical cluster name on
// this shard, else on the others (their replicas).
func (p *parts) resolveAnywhere(pathOrName string) (string, bool) {
	if c, ok := sharding.Resolver(p.index.Resolve, p.sharding.shards)(pathOrName); ok {
		return c, true
	}
	_, ok := p.sharding.shards.Others().ShardOf(pathOrName)
	return pathOrName, ok
}

// holding returns the clients of the other shard holding cluster (false
// for a cluster of this shard, or of none).
func (p *parts) holding(ctx context.Context, cluster string) (*sharding.Clients, bool, error) {
	if _, ok := p.index.Get(cluster); ok {
		return nil, false, nil
	}
	return p.sharding.shards.Holding(ctx, cluster)
}

// withServiceAccountTokens adds service-account bearer tokens to the
// request authenticator.
func (p *parts) withServiceAccountTokens(next authenticator.Request) authenticator.Request {
	return union.New(next, bearertoken.New(p.serviceAccounts.authenticator))
}

// withInformers runs informers only this controller follows, then the
// controller.
type withInformers struct {
	controller
	informers []cache.SharedIndexInformer
}

func (w withInformers) Run(ctx context.Context) {
	for _, i := range w.informers {
		go i.RunWithContext(ctx)
	}
	w.controller.Run(ctx)
}

func (p *parts) installServiceAccounts(inf informers) controller {
	rootCAs := wildcard.NewFilteredInformer(p.reg.configMaps.Storage, &corev1.ConfigMap{}, "metadata.name="+serviceaccountcontroller.RootCAConfigMap)
	_ = rootCAs.SetTransform(shareRootCA(string(p.serviceAccounts.caPEM)))
	issuer := p.config.ServiceAccountIssuer
	c := serviceaccountcontroller.New(p.reg.serviceAccounts, p.reg.configMaps, p.reg.secrets, p.serviceAccounts.caPEM,
		func(cluster string, sa *corev1.ServiceAccount, secret *corev1.Secret) (string, error) {
			return issuer.Legacy(serviceaccount.Subject{Cluster: cluster, Namespace: sa.Namespace, Name: sa.Name, UID: string(sa.UID),
				SecretName: secret.Name})
		},
		serviceaccountcontroller.Informers{
			Namespaces:      inf.of(p.reg.namespaceStore, &corev1.Namespace{}),
			ServiceAccounts: inf.of(p.reg.serviceAccounts.Storage, &corev1.ServiceAccount{}),
			RootCAs:         rootCAs,
			TokenSecrets:    p.serviceAccounts.tokenSecrets,
			ClusterDeleting: func(cluster string) bool {
				lc, ok := p.index.Get(cluster)
				return ok && lc.DeletionTimestamp != nil
			},
		})
	return withInformers{controller: c, informers: []cache.SharedIndexInformer{rootCAs, p.serviceAccounts.tokenSecrets}}
}

// shareRootCA lets the informer of kube-root-ca.crt ConfigMaps (two per
// workspace) keep one copy of the CA they all publish instead of one per
// ConfigMap. It changes a copy: a listed object shares its maps with the
// watch cache.
func shareRootCA(ca string) cache.TransformFunc {
	return func(obj any) (any, error) {
		cm, ok := obj.(*corev1.ConfigMap)
		if !ok || len(cm.Data) != 1 || cm.Data[serviceaccountcontroller.RootCAKey] != ca {
			return obj, nil
		}
		c := *cm
		c.Data = map[string]string{serviceaccountcontroller.RootCAKey: ca}
		return &c, nil
	}
}

// rootCA is the CA published as kube-root-ca.crt: the server's CA, or the
// serving certificate when it came without a CA of ours.
func (p *parts) rootCA() ([]byte, error) {
	file := p.config.CAFile
	if file == "" {
		file, _ = servingFiles(p.config.Options)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("reading the CA for kube-root-ca.crt: %w", err)
	}
	return data, nil
}

func (p *parts) installClusterRoleAggregation(inf informers) controller {
	return clusterroleaggregation.New(p.reg.clusterRoles, inf.of(p.reg.clusterRoles.Storage, &rbacv1.ClusterRole{}))
}
