package tenancy

import "testing"

// The names below are stored in existing servers' data: they were
// computed with the two functions this file replaced
// (controllers/workspace.ClusterName and tenancy/home.ClusterName).
func TestWorkspaceClusterName(t *testing.T) {
	for _, tt := range []struct{ parent, uid, want string }{
		{"root", "1b4e28ba-2fa1-11d2-883f-0016d3cca427", "171bfd7kg70ednnq"},
		{"abc", "u", "4b2x0zhuecl4isq3"},
		{"root", "00000000-0000-0000-0000-000000000000", "2iiwtp5fksverfdb"},
		{"x", "y", "2m3hhqg2yuwgw49v"},
	} {
		if got := WorkspaceClusterName(tt.parent, tt.uid); got != tt.want {
			t.Errorf("WorkspaceClusterName(%q, %q) = %q, want %q", tt.parent, tt.uid, got, tt.want)
		}
	}
}

func TestHomeClusterName(t *testing.T) {
	for _, tt := range []struct{ user, want, path string }{
		{"alice", "v1u4alow0iv9", "user:alice"},
		{"bob@example.com", "3ldegxsuo6w1q", "user:3ldegxsuo6w1q"},
		{"system:admin", "222cbzb3s2sw", "user:system:admin"},
		{"a", "2m2fww4dxob1r", "user:a"},
		{"user-1", "285xjbwx8vocb", "user:user-1"},
	} {
		if got := HomeClusterName(tt.user); got != tt.want {
			t.Errorf("HomeClusterName(%q) = %q, want %q", tt.user, got, tt.want)
		}
		if got := HomePath(tt.user); got != tt.path {
			t.Errorf("HomePath(%q) = %q, want %q", tt.user, got, tt.path)
		}
	}
}
