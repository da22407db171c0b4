package launcher

import (
	"fmt"
	"slices"
	"testing"
)

func TestMountAllowedHostsFlag(t *testing.T) {
	t.Setenv("MOUNT_ALLOWED_HOSTS", "")
	c, err := ParseFlags([]string{"--bin-dir", "/bin"})
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(coreComponent(&c).Args, "--mount-allowed-hosts") {
		t.Errorf("the core gets --mount-allowed-hosts without the flag (mounts must reach nothing by default): %v", coreComponent(&c).Args)
	}

	c, err = ParseFlags([]string{"--bin-dir", "/bin", "--shards", "2", "--mount-allowed-hosts", " 127.0.0.1:9443, mounts.example.com "})
	if err != nil {
		t.Fatal(err)
	}
	reserved := fmt.Sprintf("127.0.0.1:%d-%d", c.Ports.Base, c.Ports.Base+PortRange-1)
	for name, args := range map[string][]string{"core": coreComponent(&c).Args, "shard b": shardComponents(&c)[0].Args} {
		i := slices.Index(args, "--mount-allowed-hosts")
		if i < 0 || i+1 >= len(args) || args[i+1] != "127.0.0.1:9443,mounts.example.com" {
			t.Errorf("%s is started without --mount-allowed-hosts 127.0.0.1:9443,mounts.example.com: %v", name, args)
		}
		// The platform's ports stay out of reach under any range.
		i = slices.Index(args, "--mount-reserved-addresses")
		if i < 0 || i+1 >= len(args) || args[i+1] != reserved {
			t.Errorf("%s is started without --mount-reserved-addresses %s: %v", name, reserved, args)
		}
	}

	t.Setenv("MOUNT_ALLOWED_HOSTS", "127.0.0.1:9443")
	if c, err = ParseFlags([]string{"--bin-dir", "/bin"}); err != nil || !slices.Equal(c.MountAllowedHosts, []string{"127.0.0.1:9443"}) {
		t.Errorf("$MOUNT_ALLOWED_HOSTS: MountAllowedHosts=%v err=%v, want [127.0.0.1:9443]", c.MountAllowedHosts, err)
	}
}
