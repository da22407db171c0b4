package reservedcrdgroups

import "testing"

func TestReserved(t *testing.T) {
	for group, want := range map[string]bool{
		"apis.kcp.io":          true,
		"internal.apis.kcp.io": true,
		"myapis.kcp.io":        true, // kcp's suffix rule
		"tenancy.kcp.io":       true,
		"core.kcp.io":          true,
		"x.topology.kcp.io":    true,
		"cache.kcp.io":         true,
		"contrib.kcp.io":       false, // kcp's mount fixtures
		"kcp.io":               false,
		"mytenancy.kcp.io":     false,
		"example.com":          false,
		"apps":                 false,
	} {
		if got := Reserved(group); got != want {
			t.Errorf("Reserved(%q) = %v, want %v", group, got, want)
		}
	}
}
