package launcher

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/meshplane/meshplane/sdk/platformenv"
)

// Port offsets of the rebac-authz-webhook.
const (
	offsetRebacHTTPS   = 11
	offsetRebacMetrics = 12
)

// The core's webhook cache TTLs: half a second, not kube's 5 minutes, so a
// revoked grant stops working within a second. The webhook drops its own
// cached answers when a grant changes and then asks OpenFGA past its
// caches; this cache, in the core, knows of no change and is the rest of
// the delay (docs/benchmarks.md).
const (
	rebacCoreAuthorizedTTL   = "500ms"
	rebacCoreUnauthorizedTTL = "500ms"
)

// rebacDir holds the webhook's CA, serving and client certificates and
// the core's webhook kubeconfig.
func rebacDir(c *Config) string { return filepath.Join(c.RootDir, "rebac-authz-webhook") }

func rebacURL(c *Config) string {
	return fmt.Sprintf("https://127.0.0.1:%d", c.Ports.Base+offsetRebacHTTPS)
}

// rebacCoreArgs register the webhook with the core: it is asked after RBAC.
func rebacCoreArgs(c *Config) []string {
	return []string{
		"--authorization-webhook-config-file", filepath.Join(rebacDir(c), "core-webhook.kubeconfig"),
		"--authorization-webhook-version", "v1",
		"--authorization-webhook-cache-authorized-ttl", rebacCoreAuthorizedTTL,
		"--authorization-webhook-cache-unauthorized-ttl", rebacCoreUnauthorizedTTL,
		// SelfSubjectRulesReviews list what OpenFGA grants too.
		"--authorization-webhook-rules-path", "/rules",
		// "My organizations": /services/myorgs/clusters/root:orgs.
		"--authorization-webhook-organizations-path", "/organizations",
	}
}

// rebacCoreFiles writes, before the core starts, the self-signed CA, the
// webhook's serving certificate, the core's client certificate and the
// kubeconfig the core reads (kept across restarts).
func rebacCoreFiles(c *Config) error {
	dir := rebacDir(c)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if err := ensureRebacCerts(dir); err != nil {
		return fmt.Errorf("rebac-authz-webhook certificates: %w", err)
	}
	kubeconfig := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: rebac-authz-webhook
  cluster:
    server: %s/authz
    certificate-authority: %s
users:
- name: core
  user:
    client-certificate: %s
    client-key: %s
contexts:
- name: webhook
  context: {cluster: rebac-authz-webhook, user: core}
current-context: webhook
`, rebacURL(c), filepath.Join(dir, "ca.crt"), filepath.Join(dir, "core-client.crt"), filepath.Join(dir, "core-client.key"))
	return os.WriteFile(filepath.Join(dir, "core-webhook.kubeconfig"), []byte(kubeconfig), 0o600)
}

// rebacComponent is the rebac-authz-webhook: OpenFGA answers the core's
// SubjectAccessReviews. It learns the account workspaces through the
// core.platform-mesh.io endpoint slice with the admin credential, and
// takes only the core's client certificate.
func rebacComponent(c *Config) Component {
	dir := rebacDir(c)
	return Component{
		Name:   "rebac-authz-webhook",
		Binary: "rebac-authz-webhook",
		Args: append([]string{
			"--kubeconfig", filepath.Join(c.RootDir, adminKubeconfig), "--context", "base",
			"--workspace", providerWorkspace,
			"--openfga-url", c.OpenFGAURL(),
			"--bind-address", "127.0.0.1",
			"--secure-port", strconv.Itoa(c.Ports.Base + offsetRebacHTTPS),
			"--metrics-bind-address", fmt.Sprintf("127.0.0.1:%d", c.Ports.Base+offsetRebacMetrics),
			"--tls-cert-file", filepath.Join(dir, "serving.crt"), "--tls-private-key-file", filepath.Join(dir, "serving.key"),
			"--client-ca-file", filepath.Join(dir, "ca.crt"),
		}, c.openFGAKeyArgs()...),
		Ready: func(ctx context.Context) error {
			return waitRebacReady(ctx, rebacURL(c)+"/readyz", filepath.Join(dir, "ca.crt"))
		},
		Env: []platformenv.Entry{
			{Key: "REBAC_AUTHZ_WEBHOOK_URL", Value: rebacURL(c) + "/authz"},
			{Key: "REBAC_AUTHZ_WEBHOOK_METRICS_URL", Value: fmt.Sprintf("http://127.0.0.1:%d/metrics", c.Ports.Base+offsetRebacMetrics)},
		},
	}
}

func waitRebacReady(ctx context.Context, url, caFile string) error {
	ca, err := os.ReadFile(caFile)
	if err != nil {
		return err
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	hc := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	last := "no answer yet"
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		if resp, err := hc.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			last = resp.Status
		} else {
			last = err.Error()
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s not ready (last: %s): %w", url, last, ctx.Err())
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// ensureRebacCerts creates ca.crt/key, serving.crt/key (127.0.0.1,
// localhost) and core-client.crt/key (CN meshplane-core) in dir unless
// they exist.
func ensureRebacCerts(dir string) error {
	if _, err := os.Stat(filepath.Join(dir, "core-client.key")); err == nil {
		return nil
	}
	ca, err := newLocalCA(dir, "ca", "rebac-authz-webhook-ca")
	if err != nil {
		return err
	}
	if err := ca.issue("serving", serving("rebac-authz-webhook")); err != nil {
		return err
	}
	// Last: its presence means all are there.
	return ca.issue("core-client", clientOf("meshplane-core"))
}
