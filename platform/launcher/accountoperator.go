package launcher

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"time"
)

// accountOperatorComponent is the account-operator, following the
// core.platform-mesh.io endpoint slice in root:platform-mesh-system. It
// runs with a scoped credential only: a ServiceAccount in the provider
// workspace with the export's rights, "use" on the workspace types it
// assigns and "initialize" on root:org and root:account. Its kubeconfig
// names a token file that the launcher keeps fresh, as the kubelet does for
// a pod's projected token: a new token at 80% of the lifetime
// (--operator-token-ttl), re-read by the operator's client.
func accountOperatorComponent(c *Config) Component {
	health := fmt.Sprintf("127.0.0.1:%d", c.Ports.AccountOperatorHealth())
	admin := filepath.Join(c.RootDir, adminKubeconfig)
	return Component{
		Name:   "account-operator",
		Binary: "account-operator",
		BeforeStart: func(ctx context.Context) error {
			tf, err := OperatorCredential(ctx, admin, operatorKubeconfigPath(c), c.tokenTTL())
			if err != nil {
				return err
			}
			runTokenFile(ctx, c, tf)
			return nil
		},
		Args: append([]string{
			"--kubeconfig", operatorKubeconfigPath(c),
			"--workspace", "root:platform-mesh-system",
			"--metrics-bind-address", fmt.Sprintf("127.0.0.1:%d", c.Ports.AccountOperatorMetrics()),
			"--health-probe-bind-address", health,
		}, c.AccountOperatorArgs...),
		Ready: func(ctx context.Context) error { return waitHTTPOK(ctx, "http://"+health+"/readyz") },
	}
}

// waitHTTPOK polls url until it answers 200.
func waitHTTPOK(ctx context.Context, url string) error {
	hc := &http.Client{Timeout: 2 * time.Second}
	last := "no answer yet"
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		resp, err := hc.Do(req)
		if err == nil {
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			last = fmt.Sprintf("%d %s", resp.StatusCode, strings.TrimSpace(string(body)))
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
