package launcher

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/meshplane/meshplane/platform/bootstrap"
	"github.com/meshplane/meshplane/providers/credentials"
)

// InCluster is the platform-side setup of an installed platform (the
// Helm chart's bootstrap), which the launcher does for `make run`: the
// bootstrap manifests, then the scoped credential of each component the
// launcher gives one (the account-operator, the security-operator and the
// example providers), each a kubeconfig and a token file in Dir that
// is kept fresh until ctx ends.
type InCluster struct {
	// AdminKubeconfig is kcp-admin's kubeconfig (context base) on the
	// root shard.
	AdminKubeconfig string
	// Dir receives <name>.kubeconfig and <name>.token per credential.
	Dir string
	// Examples names example providers to set up (see Examples);
	// ExamplesDir holds their manifests (<name>/config/...).
	Examples    []string
	ExamplesDir string
	// TokenTTL is the tokens' lifetime; TokenRefresh their age at renewal
	// (0: 80% of TokenTTL).
	TokenTTL, TokenRefresh time.Duration
	// Logf reports progress and failed renewals.
	Logf func(format string, args ...any)
}

// Credentials are the names InCluster.Run writes kubeconfigs for, besides
// the example providers' (<example>-provider) and the mongodb example's
// downstream (mongodb-downstream, kcp-admin on its downstream workspace).
var Credentials = []string{"account-operator", "security-operator"}

// Run applies the bootstrap and writes the credentials; their tokens are
// renewed in the background until ctx ends.
func (ic *InCluster) Run(ctx context.Context) error {
	if err := ValidateExamples(ic.Examples); err != nil {
		return err
	}
	c := &Config{RootDir: ic.Dir, ExamplesDir: ic.ExamplesDir, OperatorTokenTTL: ic.TokenTTL, OperatorTokenRefresh: ic.TokenRefresh}
	c.logf = func(_, format string, args ...any) {
		if ic.Logf != nil {
			ic.Logf(format, args...)
		}
	}
	base, err := adminConfig(ic.AdminKubeconfig)
	if err != nil {
		return err
	}
	c.logf("", "applying the platform bootstrap")
	if err := bootstrap.Run(ctx, base); err != nil {
		return fmt.Errorf("bootstrap: %w", err)
	}
	admin := ic.AdminKubeconfig
	for name, mint := range map[string]func(ctx context.Context, admin, out string, ttl time.Duration) (*credentials.TokenFile, error){
		"account-operator":  OperatorCredential,
		"security-operator": SecurityOperatorCredential,
	} {
		c.logf("", "credential of the %s", name)
		tf, err := mint(ctx, admin, filepath.Join(ic.Dir, name+".kubeconfig"), c.tokenTTL())
		if err != nil {
			return fmt.Errorf("%s credential: %w", name, err)
		}
		runTokenFile(ctx, c, tf)
	}
	for _, name := range ic.Examples {
		c.logf("", "example provider %s", name)
		out := filepath.Join(ic.Dir, name+"-provider.kubeconfig")
		if err := setUpExample(ctx, c, base, name, name+".examples.meshplane.io", out); err != nil {
			return fmt.Errorf("example %s: %w", name, err)
		}
		if name != "mongodb" {
			continue
		}
		if err := ensureWorkspace(ctx, base, "examples-mongodb-downstream"); err != nil {
			return err
		}
		if err := bootstrap.ApplyDir(ctx, base, "root:examples-mongodb-downstream", filepath.Join(exampleDir(c, "mongodb"), "config", "downstream")); err != nil {
			return err
		}
		server := strings.TrimSuffix(base.Host, "/") + "/clusters/root:examples-mongodb-downstream"
		if err := writeWorkspaceKubeconfig(ic.AdminKubeconfig, server, filepath.Join(ic.Dir, "mongodb-downstream.kubeconfig")); err != nil {
			return err
		}
	}
	return nil
}
