package launcher

import "strings"

// mountArgs give every shard the launcher's --mount-allowed-hosts: where
// mounted workspaces may point. Empty (the default): nowhere, so a
// tenant's mount object cannot reach the platform's own services on
// loopback (OpenFGA, etcd, the operators' and webhook's ports); a mount
// server run next to the platform is allowed by naming its address.
func mountArgs(c *Config) []string {
	if len(c.MountAllowedHosts) == 0 {
		return nil
	}
	return []string{"--mount-allowed-hosts", strings.Join(c.MountAllowedHosts, ",")}
}
