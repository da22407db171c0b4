package launcher

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/meshplane/meshplane/sdk/kubeconfig"
	"github.com/meshplane/meshplane/sdk/platformenv"
)

// A sharded platform (--shards 2) adds shard b and the front proxy on the
// free offsets 16..19; shards c and d (--shards 3 and 4) are in the
// range's extension (ExtendedPortRange), three ports each.
const (
	offsetShardB     = 16
	offsetFrontProxy = 19
	offsetShardC     = 20
	offsetShardD     = 23
)

// MaxShards is how many shards one platform runs at most.
const MaxShards = 4

// extraShard is a shard besides root: its name and its three ports
// (secure, etcd client, etcd peer) from offset.
type extraShard struct {
	Name   string
	offset int
}

// extraShards are the shards a platform of n shards runs besides root, in
// order: b, c, d.
func extraShards(n int) []extraShard {
	all := []extraShard{{"b", offsetShardB}, {"c", offsetShardC}, {"d", offsetShardD}}
	return all[:max(0, min(n, MaxShards)-1)]
}

// ShardNames names the shards a platform of n shards runs: root, b, ...
func ShardNames(n int) []string {
	names := []string{"root"}
	for _, s := range extraShards(n) {
		names = append(names, s.Name)
	}
	return names
}

// checkShards refuses a shard count the platform cannot run.
func checkShards(n int) error {
	if n < 1 || n > MaxShards {
		return fmt.Errorf("--shards %d: a platform runs 1 to %d shards (root, b, c, d)", n, MaxShards)
	}
	return nil
}

// frontProxyName is the common name of the proxy's client certificate:
// the one name shards believe identity headers from.
const frontProxyName = "meshplane-front-proxy"

func frontProxyDir(c *Config) string { return filepath.Join(c.RootDir, "front-proxy") }
func shardDir(c *Config, name string) string {
	return filepath.Join(c.RootDir, "shard-"+name)
}

// FrontProxyURL is the front proxy's URL.
func (c *Config) FrontProxyURL() string {
	return fmt.Sprintf("https://127.0.0.1:%d", c.Ports.Base+offsetFrontProxy)
}

// ShardURL is the URL of shard name (root: the core).
func (c *Config) ShardURL(name string) string {
	for _, s := range extraShards(c.Shards) {
		if s.Name == name {
			return fmt.Sprintf("https://127.0.0.1:%d", c.Ports.Base+s.offset)
		}
	}
	return c.CoreURL()
}

// ShardBURL is shard b's URL.
func (c *Config) ShardBURL() string { return c.ShardURL("b") }

// shardEnvKey is platform.env's variable of shard name's URL.
func shardEnvKey(name string) string { return "SHARD_" + strings.ToUpper(name) + "_URL" }

// rootShardKubeconfig is the shard-base context of the root shard's admin
// kubeconfig: how the other shards and the proxy reach root.
func rootShardKubeconfig(c *Config) string {
	return filepath.Join(frontProxyDir(c), "root-shard.kubeconfig")
}

// ProxyKubeconfig is the admin kubeconfig of a sharded platform: the
// root shard's, with every server on the front proxy.
func (c *Config) ProxyKubeconfig() string { return filepath.Join(frontProxyDir(c), "admin.kubeconfig") }

// shardArgs make a shard believe the proxy's identity headers and name
// the proxy as the URL of its workspaces.
func shardArgs(c *Config) []string {
	if c.Shards < 2 {
		return nil
	}
	// The shards read each other from the cache server the root shard
	// embeds: one watch per kind whatever the number of shards.
	return []string{"--requestheader-client-ca-file", filepath.Join(frontProxyDir(c), "requestheader-ca.crt"),
		"--requestheader-allowed-names", frontProxyName, "--shard-external-url", c.FrontProxyURL(), "--replica-source=cache"}
}

// ensureProxyCerts writes the proxy's certificates unless they exist: the
// CA shards believe identity headers from and the proxy's client
// certificate from it, the serving CA and certificate, and the CA of the
// client certificates users may present.
func ensureProxyCerts(c *Config) error {
	dir := frontProxyDir(c)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(dir, "serving.key")); err == nil {
		return nil
	}
	if _, err := newLocalCA(dir, "client-ca", "meshplane-front-proxy-client-ca"); err != nil {
		return err
	}
	rh, err := newLocalCA(dir, "requestheader-ca", "meshplane-requestheader-ca")
	if err != nil {
		return err
	}
	if err := rh.issue("proxy-client", clientOf(frontProxyName)); err != nil {
		return err
	}
	sv, err := newLocalCA(dir, "serving-ca", "meshplane-front-proxy-serving-ca")
	if err != nil {
		return err
	}
	// Last: its presence means all are there.
	return sv.issue("serving", serving("meshplane-front-proxy"))
}

// shardComponents are the shards besides root and the front proxy (none
// on one shard).
func shardComponents(c *Config) []Component {
	if c.Shards < 2 {
		return nil
	}
	var comps []Component
	for _, s := range extraShards(c.Shards) {
		comps = append(comps, shardComponent(c, s))
	}
	pdir := frontProxyDir(c)
	// The proxy follows the shards from root's Shard objects; platform.env
	// names them all.
	env := []platformenv.Entry{
		{Key: "KUBECONFIG", Value: c.ProxyKubeconfig()},
		{Key: "FRONT_PROXY_URL", Value: c.FrontProxyURL()},
		{Key: "SHARD_NAMES", Value: strings.Join(ShardNames(c.Shards), ",")},
		{Key: shardEnvKey("root"), Value: c.CoreURL()},
	}
	proxy := Component{
		Name:   "front-proxy",
		Binary: "front-proxy",
		Args: []string{"--bind-address", "127.0.0.1", "--secure-port", strconv.Itoa(c.Ports.Base + offsetFrontProxy),
			"--tls-cert-file", filepath.Join(pdir, "serving.crt"), "--tls-private-key-file", filepath.Join(pdir, "serving.key"),
			"--client-ca-file", filepath.Join(pdir, "client-ca.crt"),
			"--proxy-client-cert-file", filepath.Join(pdir, "proxy-client.crt"), "--proxy-client-key-file", filepath.Join(pdir, "proxy-client.key"),
			"--root-kubeconfig", rootShardKubeconfig(c)},
		Ready: func(ctx context.Context) error {
			return waitRebacReady(ctx, c.FrontProxyURL()+"/readyz", filepath.Join(pdir, "serving-ca.crt"))
		},
		AfterReady: func(context.Context) error { return writeProxyKubeconfig(c) },
		Env:        env,
	}
	return append(comps, proxy)
}

// shardComponent is shard s: its own root directory and ports, joined to
// root, believing the proxy's identity headers.
func shardComponent(c *Config, s extraShard) Component {
	dir := shardDir(c, s.Name)
	args := []string{"start",
		"--root-directory", dir,
		"--bind-address", "127.0.0.1",
		"--secure-port", strconv.Itoa(c.Ports.Base + s.offset),
		"--embedded-etcd-client-port", strconv.Itoa(c.Ports.Base + s.offset + 1),
		"--embedded-etcd-peer-port", strconv.Itoa(c.Ports.Base + s.offset + 2),
		"--shard-name", s.Name, "--root-shard-kubeconfig", rootShardKubeconfig(c),
	}
	args = append(args, shardArgs(c)...)
	// Every shard authenticates the same users: tokens reach a shard
	// through the proxy unchanged.
	if c.AuthenticationConfig != "" {
		args = append(args, "--authentication-config", c.AuthenticationConfig)
	}
	if c.DemoUsers {
		args = append(args, "--token-auth-file", filepath.Join(c.RootDir, demoUsersFile))
	}
	return Component{
		Name:   "shard-" + s.Name,
		Binary: "meshplane",
		Args:   append(append(append(args, rebacCoreArgs(c)...), mountArgs(c)...), c.CoreArgs...),
		// Shards of one install share the CA, the admin tokens and the
		// service-account signing key.
		BeforeStart: func(context.Context) error {
			if err := os.MkdirAll(dir, 0o700); err != nil {
				return err
			}
			for _, f := range []string{"ca.crt", "ca.key", "admin-tokens", "service-account.key"} {
				if err := copyFile(filepath.Join(c.RootDir, f), filepath.Join(dir, f)); err != nil {
					return err
				}
			}
			return kubeconfig.WithContext(filepath.Join(c.RootDir, adminKubeconfig), "shard-base", rootShardKubeconfig(c))
		},
		Ready: func(ctx context.Context) error { return waitCoreReady(ctx, filepath.Join(dir, adminKubeconfig)) },
		Env:   []platformenv.Entry{{Key: shardEnvKey(s.Name), Value: c.ShardURL(s.Name)}},
	}
}

// writeProxyKubeconfig copies the root shard's admin kubeconfig (with the
// demo users' contexts) with every server on the proxy, trusting its CA.
func writeProxyKubeconfig(c *Config) error {
	ca, err := os.ReadFile(filepath.Join(frontProxyDir(c), "serving-ca.crt"))
	if err != nil {
		return err
	}
	return kubeconfig.Rehosted(filepath.Join(c.RootDir, adminKubeconfig), c.FrontProxyURL(), ca, c.ProxyKubeconfig())
}

func copyFile(from, to string) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, b, 0o600)
}
