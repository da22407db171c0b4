package launcher

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestAuthenticationConfigFlag(t *testing.T) {
	t.Setenv("AUTHENTICATION_CONFIG", "")
	dir := t.TempDir()
	file := filepath.Join(dir, "auth.yaml")
	if err := os.WriteFile(file, []byte("apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt: []\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	c, err := ParseFlags([]string{"--bin-dir", "/bin", "--authentication-config", "auth.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	if c.AuthenticationConfig != file {
		t.Errorf("AuthenticationConfig = %q, want the absolute %q", c.AuthenticationConfig, file)
	}
	args := coreComponent(&c).Args
	if i := slices.Index(args, "--authentication-config"); i < 0 || i+1 >= len(args) || args[i+1] != file {
		t.Errorf("the core is started without --authentication-config %s: %v", file, args)
	}
	// Sharded, shard b authenticates the same users (tokens reach it
	// through the proxy unchanged).
	c.Shards = 2
	for _, comp := range shardComponents(&c) {
		if comp.Name != "shard-b" {
			continue
		}
		if i := slices.Index(comp.Args, "--authentication-config"); i < 0 || i+1 >= len(comp.Args) || comp.Args[i+1] != file {
			t.Errorf("shard b is started without --authentication-config %s: %v", file, comp.Args)
		}
	}

	c, err = ParseFlags([]string{"--bin-dir", "/bin"})
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(coreComponent(&c).Args, "--authentication-config") {
		t.Errorf("the core gets --authentication-config without the flag: %v", coreComponent(&c).Args)
	}

	for _, bad := range []string{filepath.Join(dir, "missing.yaml"), dir} {
		if _, err := ParseFlags([]string{"--bin-dir", "/bin", "--authentication-config", bad}); err == nil || !strings.Contains(err.Error(), "--authentication-config") {
			t.Errorf("--authentication-config %s: err %v, want an error naming the flag", bad, err)
		}
	}
}
