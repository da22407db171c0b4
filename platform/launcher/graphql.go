package launcher

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"strconv"
	"time"

	"github.com/meshplane/meshplane/sdk/platformenv"
)

// graphqlComponent is the GraphQL gateway: every workspace's APIs as a
// GraphQL API at GRAPHQL_URL/api/clusters/<workspace>/graphql. It reads
// schemas with the admin kubeconfig's shard admin and passes each
// caller's own token to the core for data.
func graphqlComponent(c *Config) Component {
	url := fmt.Sprintf("http://127.0.0.1:%d", c.Ports.GraphQL())
	args := []string{
		"--kubeconfig", filepath.Join(c.RootDir, adminKubeconfig),
		"--context", "shard-base",
		"--listen", "127.0.0.1:" + strconv.Itoa(c.Ports.GraphQL()),
	}
	if c.Shards >= 2 {
		// Workspaces of every shard through the proxy; the shards are
		// followed from root.
		args = append(args, "--front-proxy-kubeconfig", c.ProxyKubeconfig())
	}
	return Component{
		Name:   "graphql",
		Binary: "graphql-gateway",
		Args:   args,
		Ready:  func(ctx context.Context) error { return waitHTTPReady(ctx, url+"/readyz") },
		Env:    []platformenv.Entry{{Key: "GRAPHQL_URL", Value: url}},
	}
}

// waitHTTPReady polls url until it answers 200.
func waitHTTPReady(ctx context.Context, url string) error {
	hc := &http.Client{Timeout: 2 * time.Second}
	last := "no answer yet"
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		resp, err := hc.Do(req)
		if err == nil {
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
		case <-time.After(200 * time.Millisecond):
		}
	}
}
