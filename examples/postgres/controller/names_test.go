package controller

import (
	"strings"
	"testing"
)

func TestNames(t *testing.T) {
	db1, role1 := Names("2rczdb3go3rk5xqx", "default", "app", "owner")
	db2, _ := Names("1s9p6g38p29f1x2v", "default", "app", "owner")
	if db1 == db2 {
		t.Fatalf("two workspaces share database %s", db1)
	}
	if db1 != "2rczdb3go3rk5xqx_default_app" || role1 != "2rczdb3go3rk5xqx_default_app_owner" {
		t.Errorf("names %s %s", db1, role1)
	}
	long := strings.Repeat("n", 60)
	a, _ := Names("c1", "ns", long+"a", "o")
	b, _ := Names("c1", "ns", long+"b", "o")
	if len(a) != maxIdentifier || a == b {
		t.Errorf("long names: %q (%d) %q", a, len(a), b)
	}
	if x, y := identifier("my-app"), identifier("my.app"); x == y || !strings.HasPrefix(x, "my_app_") {
		t.Errorf("identifier(my-app) = %q, identifier(my.app) = %q", x, y)
	}
}
