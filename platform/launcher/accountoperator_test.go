package launcher

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// TestAccountOperatorHasNoAdminCredential: the operator gets its scoped
// kubeconfig and nothing that leads to the admin kubeconfig.
func TestAccountOperatorHasNoAdminCredential(t *testing.T) {
	c := &Config{RootDir: "/state", Ports: Ports{Base: 20600}}
	comp := accountOperatorComponent(c)
	i := slices.Index(comp.Args, "--kubeconfig")
	if i < 0 || comp.Args[i+1] != "/state/"+operatorKubeconfig {
		t.Fatalf("--kubeconfig is not the operator's scoped kubeconfig: %v", comp.Args)
	}
	for _, a := range comp.Args {
		if strings.Contains(a, adminKubeconfig) || strings.HasPrefix(a, "--workaround") || a == "--context" {
			t.Errorf("the operator is handed an admin credential: %v", comp.Args)
		}
	}
}

func TestOperatorTokenFlags(t *testing.T) {
	c, err := ParseFlags([]string{"--bin-dir", "/bin", "--operator-token-ttl", "10m", "--operator-token-refresh", "30s"})
	if err != nil || c.OperatorTokenTTL != 10*time.Minute || c.OperatorTokenRefresh != 30*time.Second {
		t.Fatalf("ParseFlags: %+v, %v", c, err)
	}
	if c, err := ParseFlags([]string{"--bin-dir", "/bin"}); err != nil || c.OperatorTokenTTL != DefaultOperatorTokenTTL {
		t.Errorf("default token lifetime %s (%v), want %s", c.OperatorTokenTTL, err, DefaultOperatorTokenTTL)
	}
	for _, args := range [][]string{
		{"--operator-token-ttl", "5m"},
		{"--operator-token-ttl", "10m", "--operator-token-refresh", "10m"},
	} {
		if _, err := ParseFlags(append([]string{"--bin-dir", "/bin"}, args...)); err == nil {
			t.Errorf("ParseFlags(%v) accepted", args)
		}
	}
}
