package launcher

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"k8s.io/client-go/rest"

	"github.com/meshplane/meshplane/platform/bootstrap"
	"github.com/meshplane/meshplane/sdk/platformenv"
	"k8s.io/client-go/tools/clientcmd"
)

// adminKubeconfig is the file the core writes into its root directory.
const adminKubeconfig = "admin.kubeconfig"

// coreComponent is the core server on the platform's first ports, with its
// state in the root directory itself (so `make run` keeps the layout a core
// started alone has).
func coreComponent(c *Config) Component {
	args := []string{"start",
		"--root-directory", c.RootDir,
		"--bind-address", "127.0.0.1",
		"--secure-port", strconv.Itoa(c.Ports.Core()),
		"--embedded-etcd-client-port", strconv.Itoa(c.Ports.CoreEtcdClient()),
		"--embedded-etcd-peer-port", strconv.Itoa(c.Ports.CoreEtcdPeer()),
	}
	if c.AuthenticationConfig != "" {
		args = append(args, "--authentication-config", c.AuthenticationConfig)
	}
	if c.DemoUsers {
		args = append(args, "--token-auth-file", filepath.Join(c.RootDir, demoUsersFile))
	}
	kubeconfig := filepath.Join(c.RootDir, adminKubeconfig)
	comp := Component{
		Name:   "core",
		Binary: "meshplane",
		Args:   append(append(append(append(args, rebacCoreArgs(c)...), shardArgs(c)...), mountArgs(c)...), c.CoreArgs...),
		// The rebac-authz-webhook's certificates and the kubeconfig that
		// registers it (and, sharded, the front proxy's) exist before the
		// core reads them.
		BeforeStart: func(context.Context) error {
			if c.Shards > 1 {
				if err := ensureProxyCerts(c); err != nil {
					return fmt.Errorf("front proxy certificates: %w", err)
				}
			}
			return rebacCoreFiles(c)
		},
		Ready: func(ctx context.Context) error { return waitCoreReady(ctx, kubeconfig) },
		Env:   []platformenv.Entry{{Key: "CORE_URL", Value: c.CoreURL()}},
	}
	if c.Shards < 2 {
		// Sharded, the front proxy's kubeconfig is the platform's.
		comp.Env = append([]platformenv.Entry{{Key: "KUBECONFIG", Value: kubeconfig}}, comp.Env...)
	}
	comp.AfterReady = func(ctx context.Context) error {
		base, err := adminConfig(kubeconfig)
		if err != nil {
			return err
		}
		if err := bootstrap.Run(ctx, base); err != nil {
			return err
		}
		if !c.DemoUsers {
			return nil
		}
		return addDemoContexts(kubeconfig, c.CoreURL(), filepath.Join(c.RootDir, demoUsersFile))
	}
	if c.DemoUsers {
		// The core writes admin.kubeconfig afresh when it starts.
		comp.AfterRestart = func(context.Context) error {
			return addDemoContexts(kubeconfig, c.CoreURL(), filepath.Join(c.RootDir, demoUsersFile))
		}
	}
	return comp
}

// waitCoreReady polls /readyz with the admin credentials until it answers
// 200. The kubeconfig appears (or is rewritten) while the core starts.
func waitCoreReady(ctx context.Context, kubeconfig string) error {
	last := "no answer yet"
	for {
		if ok, why := coreReady(ctx, kubeconfig); ok {
			return nil
		} else {
			last = why
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("core not ready (last: %s): %w", last, ctx.Err())
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// adminConfig is the admin kubeconfig's "base" context: kcp-admin at the
// core's base URL.
func adminConfig(kubeconfig string) (*rest.Config, error) {
	return clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		&clientcmd.ClientConfigLoadingRules{ExplicitPath: kubeconfig},
		&clientcmd.ConfigOverrides{CurrentContext: "base"}).ClientConfig()
}

func coreReady(ctx context.Context, kubeconfig string) (bool, string) {
	cfg, err := adminConfig(kubeconfig)
	if err != nil {
		return false, err.Error()
	}
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return false, err.Error()
	}
	defer hc.CloseIdleConnections()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(cfg.Host, "/")+"/readyz", nil)
	if err != nil {
		return false, err.Error()
	}
	resp, err := hc.Do(req)
	if err != nil {
		return false, err.Error()
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK {
		return false, fmt.Sprintf("/readyz %d %s", resp.StatusCode, strings.TrimSpace(string(body)))
	}
	return true, ""
}
