package kubecluster

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// cniBinDir is where Debian's containernetworking-plugins puts the plugins.
const cniBinDir = "/usr/lib/cni"

// setUpNetwork creates the node's bridge with NodeIP (the pods' gateway),
// turns on forwarding and bridged-traffic filtering (kube-proxy's rules must
// see pod-to-pod traffic through a Service; both are host-wide), and writes
// containerd's CNI configuration: the bridge plugin, host-local addresses
// from podSubnet, portmap.
func (c *Cluster) setUpNetwork(context.Context) error {
	// A bridge left by a cluster that did not stop goes first.
	if exec.Command("ip", "link", "show", NodeBridge).Run() == nil {
		if err := ip("link", "del", NodeBridge); err != nil {
			return err
		}
	}
	if err := ip("link", "add", NodeBridge, "type", "bridge"); err != nil {
		return err
	}
	c.bridgeUp = true
	if err := ip("addr", "add", NodeIP+"/24", "dev", NodeBridge); err != nil {
		return err
	}
	if err := ip("link", "set", NodeBridge, "up"); err != nil {
		return err
	}
	for name, value := range map[string]string{
		"net/ipv4/ip_forward":                 "1",
		"net/bridge/bridge-nf-call-iptables":  "1",
		"net/bridge/bridge-nf-call-ip6tables": "1",
	} {
		if err := writeSysctl(name, value); err != nil {
			return fmt.Errorf("sysctl %s: %w", name, err)
		}
	}
	dir := c.path("cni", "net.d")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	conf := fmt.Sprintf(`{
  "cniVersion": "1.0.0",
  "name": "kubecluster",
  "plugins": [
    {
      "type": "bridge",
      "bridge": %q,
      "isGateway": true,
      "ipMasq": true,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "ranges": [[{"subnet": %q, "gateway": %q}]],
        "routes": [{"dst": "0.0.0.0/0"}],
        "dataDir": %q
      }
    },
    {"type": "portmap", "capabilities": {"portMappings": true}}
  ]
}
`, NodeBridge, podSubnet, NodeIP, c.path("cni", "ipam"))
	return os.WriteFile(dir+"/10-kubecluster.conflist", []byte(conf), 0o644)
}

// tearDownNetwork deletes the bridge.
func (c *Cluster) tearDownNetwork() error {
	if !c.bridgeUp {
		return nil
	}
	c.bridgeUp = false
	return ip("link", "del", NodeBridge)
}

func ip(args ...string) error {
	out, err := exec.Command("ip", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, out)
	}
	return nil
}
