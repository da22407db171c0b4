package launcher

import (
	"fmt"
	"strings"
)

// mountArgs give every shard the launcher's --mount-allowed-hosts: where
// mounted workspaces may point. Empty (the default): nowhere, so a
// tenant's mount object cannot reach the platform's own services on
// loopback (OpenFGA, etcd, the operators' and webhook's ports); a mount
// server run next to the platform is allowed by naming its address. The
// platform's whole port range is reserved too, so even a range such as
// 127.0.0.0/8 leaves those services out unless one is named with its port.
func mountArgs(c *Config) []string {
	args := []string{"--mount-reserved-addresses", fmt.Sprintf("127.0.0.1:%d-%d", c.Ports.Base, c.Ports.Last())}
	if len(c.MountAllowedHosts) > 0 {
		args = append(args, "--mount-allowed-hosts", strings.Join(c.MountAllowedHosts, ","))
	}
	return args
}
