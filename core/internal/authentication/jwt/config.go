// Package jwt authenticates bearer JWTs of external issuers (OIDC) as
// kube-apiserver does with --authentication-config: the structured
// AuthenticationConfiguration (apiserver.config.k8s.io v1alpha1, v1beta1,
// v1) and k8s.io/apiserver's own JWT authenticator
// (plugin/pkg/authenticator/token/oidc) with its claim mappings, claim and
// user validation rules and CEL. The same authenticators serve kcp's
// per-workspace-type WorkspaceAuthenticationConfigurations
// (authentication/workspaceauth).
package jwt

import (
	"errors"
	"fmt"
	"os"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apiserver/pkg/apis/apiserver"
	"k8s.io/apiserver/pkg/apis/apiserver/install"
	"k8s.io/apiserver/pkg/apis/apiserver/validation"
	authenticationcel "k8s.io/apiserver/pkg/authentication/cel"
)

var (
	scheme = runtime.NewScheme()
	codecs = serializer.NewCodecFactory(scheme, serializer.EnableStrict)
)

func init() { install.Install(scheme) }

// compiler is the CEL compiler of claim and user expressions, shared by
// every authenticator: its environment is expensive to build.
var compiler = sync.OnceValue(authenticationcel.NewDefaultCompiler)

// Load reads and validates an AuthenticationConfiguration file.
// disallowedIssuers are issuers the file may not use (the service-account
// issuers, as in kube-apiserver).
func Load(file string, disallowedIssuers []string) (*apiserver.AuthenticationConfiguration, []byte, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, nil, fmt.Errorf("--authentication-config: %w", err)
	}
	c, err := Parse(data, disallowedIssuers)
	if err != nil {
		return nil, nil, fmt.Errorf("--authentication-config %s: %w", file, err)
	}
	return c, data, nil
}

// Parse decodes (strictly: unknown fields are errors) and validates an
// AuthenticationConfiguration in YAML or JSON.
func Parse(data []byte, disallowedIssuers []string) (*apiserver.AuthenticationConfiguration, error) {
	obj, gvk, err := codecs.UniversalDecoder().Decode(data, nil, nil)
	if err != nil {
		return nil, err
	}
	c, ok := obj.(*apiserver.AuthenticationConfiguration)
	if !ok {
		return nil, fmt.Errorf("expected AuthenticationConfiguration, got %s", gvk.Kind)
	}
	if c.Anonymous != nil {
		return nil, errors.New("anonymous: not supported (anonymous callers reach /healthz, /livez, /readyz and /version only)")
	}
	if err := Validate(c, disallowedIssuers); err != nil {
		return nil, err
	}
	return c, nil
}

// Validate checks a configuration as kube-apiserver does (issuer URLs,
// audiences, claim mappings, CEL expressions compiled).
func Validate(c *apiserver.AuthenticationConfiguration, disallowedIssuers []string) error {
	return validation.ValidateAuthenticationConfiguration(compiler(), c, disallowedIssuers).ToAggregate()
}
