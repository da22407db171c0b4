package server

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"time"

	apiextensionsapiserver "k8s.io/apiextensions-apiserver/pkg/apiserver"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/user"
	openapinamer "k8s.io/apiserver/pkg/endpoints/openapi"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/apiserver/pkg/server/dynamiccertificates"
	genericoptions "k8s.io/apiserver/pkg/server/options"
	"k8s.io/apiserver/pkg/util/compatibility"

	"github.com/meshplane/meshplane/core/internal/adminkubeconfig"
	builtinapi "github.com/meshplane/meshplane/core/internal/apis/builtin"
	"github.com/meshplane/meshplane/core/internal/auditlog"
	"github.com/meshplane/meshplane/core/internal/authentication"
	"github.com/meshplane/meshplane/core/internal/authentication/jwt"
	"github.com/meshplane/meshplane/core/internal/authorization"
	"github.com/meshplane/meshplane/core/internal/authorization/webhook"
	"github.com/meshplane/meshplane/core/internal/certs"
	"github.com/meshplane/meshplane/core/internal/openapi/definitions"
	"github.com/meshplane/meshplane/core/internal/server/options"
	"github.com/meshplane/meshplane/core/internal/serviceaccount"
)

// Config is everything the server needs that no running process does:
// the state directory, certificates, admin tokens, authentication and the
// generic server's config (serving, audit, OpenAPI).
type Config struct {
	Options *options.Completed
	Generic *genericapiserver.Config
	// TokenAuthenticator checks bearer tokens (for TokenReviews).
	TokenAuthenticator authenticator.Token
	// CAFile signs the serving certificate; Tokens are the admin tokens.
	CAFile string
	Tokens adminkubeconfig.Tokens
	// ServiceAccountKeys sign and verify service-account tokens;
	// ServiceAccountIssuer mints them.
	ServiceAccountKeys   *serviceaccount.Keys
	ServiceAccountIssuer *serviceaccount.Issuer
	// JWT are the issuers of --authentication-config (nil without it).
	JWT *jwt.File

	// AuthorizationWebhook is asked after RBAC; empty without
	// --authorization-webhook-config-file.
	AuthorizationWebhook authorization.Webhook
	// Organizations names a user's organizations for the "myorgs"
	// virtual workspace; nil without --authorization-webhook-organizations-path.
	Organizations *webhook.Organizations

	auditFile *os.File
}

// NewConfig prepares the state directory, certificates and tokens, and
// builds the generic server's config. It starts no goroutine and no etcd.
func NewConfig(opts *options.Completed) (*Config, error) {
	disableWatchListClient()
	if err := os.MkdirAll(opts.RootDirectory, 0o755); err != nil {
		return nil, err
	}
	if err := applyFeatureGates(opts.FeatureGates); err != nil {
		return nil, err
	}
	host, _, _ := net.SplitHostPort(opts.ExternalAddress)
	caFile, err := ensureCerts(opts, []string{host, opts.BindAddress})
	if err != nil {
		return nil, fmt.Errorf("certificates: %w", err)
	}
	tokens, err := adminkubeconfig.LoadOrCreateTokens(opts.RootDirectory)
	if err != nil {
		return nil, err
	}
	authn, tokenAuthn, err := authentication.New(authentication.Config{
		Tokens: map[string]*user.DefaultInfo{
			tokens.KCPAdmin:   {Name: "kcp-admin", Groups: []string{authentication.KCPAdminGroup}},
			tokens.ShardAdmin: {Name: "shard-admin", Groups: []string{authentication.MastersGroup}},
		},
		TokenAuthFile: opts.TokenAuthFile,
		ClientCAFile:  opts.ClientCAFile,

		RequestHeaderCAFile:       opts.RequestHeaderClientCAFile,
		RequestHeaderAllowedNames: opts.RequestHeaderAllowedNames,
	})
	if err != nil {
		return nil, err
	}
	c := &Config{Options: opts, TokenAuthenticator: tokenAuthn, CAFile: caFile, Tokens: tokens}
	if opts.AuthorizationWebhookConfigFile != "" {
		breaker := webhook.NewBreaker(webhook.MinBackoff, webhook.MaxBackoff)
		if c.AuthorizationWebhook.Authorizer, err = webhook.New(webhook.Config{
			KubeconfigFile: opts.AuthorizationWebhookConfigFile, Version: opts.AuthorizationWebhookVersion,
			AuthorizedTTL:   opts.AuthorizationWebhookCacheAuthorizedTTL,
			UnauthorizedTTL: opts.AuthorizationWebhookCacheUnauthorizedTTL,
			Timeout:         opts.AuthorizationWebhookTimeout,
			Breaker:         breaker,
		}); err != nil {
			return nil, err
		}
		if opts.AuthorizationWebhookRulesPath != "" {
			if c.AuthorizationWebhook.Rules, err = webhook.NewRules(opts.AuthorizationWebhookConfigFile, opts.AuthorizationWebhookRulesPath,
				opts.AuthorizationWebhookTimeout, breaker); err != nil {
				return nil, err
			}
		}
		if opts.AuthorizationWebhookOrganizationsPath != "" {
			// Not behind the breaker: a failed "My organizations" answer
			// (a tenant can ask as often as he likes) must not stop the
			// authorizer asking the webhook.
			if c.Organizations, err = webhook.NewOrganizations(opts.AuthorizationWebhookConfigFile, opts.AuthorizationWebhookOrganizationsPath,
				opts.AuthorizationWebhookTimeout, nil); err != nil {
				return nil, err
			}
		}
	}
	if err := c.loadServiceAccountKeys(); err != nil {
		return nil, err
	}
	if err := c.loadAuthenticationConfig(); err != nil {
		return nil, err
	}
	if c.Generic, err = c.genericConfig(); err != nil {
		c.closeAudit()
		return nil, err
	}
	c.Generic.Authentication.Authenticator = authn
	if c.Generic.SecureServing.ClientCA, err = clientCAs(opts.ClientCAFile, opts.RequestHeaderClientCAFile); err != nil {
		return nil, err
	}
	return c, nil
}

// genericConfig is the generic server's config: serving, audit, version
// and OpenAPI. The authorizer, admission and handler chain are added when
// the registries exist (Run).
func (c *Config) genericConfig() (*genericapiserver.Config, error) {
	opts := c.Options
	config := genericapiserver.NewConfig(builtinapi.Codecs)
	config.EffectiveVersion = effectiveVersion{compatibility.DefaultBuildEffectiveVersion()}
	serving := genericoptions.NewSecureServingOptions()
	serving.BindAddress = net.ParseIP(opts.BindAddress)
	serving.BindPort = opts.SecurePort
	// Files, not bytes: the generic server re-reads them when they change.
	serving.ServerCert.CertKey.CertFile, serving.ServerCert.CertKey.KeyFile = servingFiles(opts)
	if err := serving.WithLoopback().ApplyTo(&config.SecureServing, &config.LoopbackClientConfig); err != nil {
		return nil, fmt.Errorf("serving: %w", err)
	}
	config.ExternalAddress = opts.ExternalAddress
	// Watches end when shutdown begins: other shards and the front proxy
	// watch every shard, and would hold its shutdown for a minute.
	config.ShutdownWatchTerminationGracePeriod = 5 * time.Second
	if opts.AuditLogPath != "" {
		backend, evaluator, f, err := auditlog.New(opts.AuditLogPath)
		if err != nil {
			return nil, err
		}
		c.auditFile = f
		config.AuditBackend, config.AuditPolicyRuleEvaluator = backend, evaluator
	}
	namer := openapinamer.NewDefinitionNamer(builtinapi.Scheme, apiextensionsapiserver.Scheme)
	config.OpenAPIConfig = genericapiserver.DefaultOpenAPIConfig(definitions.Definitions, namer)
	config.OpenAPIConfig.Info.Title = "Meshplane"
	config.OpenAPIV3Config = genericapiserver.DefaultOpenAPIV3Config(definitions.Definitions, namer)
	config.OpenAPIV3Config.Info.Title = "Meshplane"
	return config, nil
}

// clientCAs are the CAs named in the TLS handshake, so that clients
// (kubectl with a client certificate, the front proxy) send their
// certificates; the authenticators verify them.
func clientCAs(files ...string) (dynamiccertificates.CAContentProvider, error) {
	var cas []dynamiccertificates.CAContentProvider
	for _, f := range files {
		if f == "" {
			continue
		}
		ca, err := dynamiccertificates.NewDynamicCAContentFromFile("client-ca", f)
		if err != nil {
			return nil, fmt.Errorf("client CA %s: %w", f, err)
		}
		cas = append(cas, ca)
	}
	if len(cas) == 0 {
		return nil, nil
	}
	return dynamiccertificates.NewUnionCAContentProvider(cas...), nil
}

func (c *Config) closeAudit() {
	if c.auditFile != nil {
		_ = c.auditFile.Close()
		c.auditFile = nil
	}
}

type completedConfig struct {
	*Config
	// ExternalURL is the base URL clients reach the server at.
	ExternalURL string
}

// CompletedConfig is a Config with its defaults filled in; only it can
// make a Server.
type CompletedConfig struct {
	*completedConfig
}

// Complete fills in what follows from the rest.
func (c *Config) Complete() CompletedConfig {
	return CompletedConfig{&completedConfig{Config: c, ExternalURL: "https://" + c.Options.ExternalAddress}}
}

// servingFiles are the serving certificate and key: --tls-cert-file and
// --tls-private-key-file, else the root directory's.
func servingFiles(opts *options.Completed) (cert, key string) {
	if opts.TLSCertFile != "" {
		return opts.TLSCertFile, opts.TLSPrivateKeyFile
	}
	return filepath.Join(opts.RootDirectory, certs.ServingCert), filepath.Join(opts.RootDirectory, certs.ServingKey)
}

// ensureCerts makes the root directory's CA and serving certificate once and
// returns the CA clients trust. With --tls-cert-file the serving certificate
// is someone else's (cert-manager's): nothing is made, and the root
// directory's CA, when there is one, is still the CA handed out.
func ensureCerts(opts *options.Completed, hosts []string) (string, error) {
	if opts.TLSCertFile == "" {
		return certs.Ensure(opts.RootDirectory, hosts)
	}
	ca := filepath.Join(opts.RootDirectory, certs.CACert)
	if _, err := os.Stat(ca); err != nil {
		return "", nil
	}
	return ca, nil
}
