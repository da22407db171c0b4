package launcher

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestSecurityComponentsArgs: the platform's own OpenFGA and the
// security-operator get the extra arguments after their own, and the
// operator writes tuples over OpenFGA's gRPC port unless OpenFGA is
// external.
func TestSecurityComponentsArgs(t *testing.T) {
	c, err := ParseFlags([]string{"--bin-dir", "/bin", "--port-base", "20600",
		"--security-operator-args", "--profiling --workers 8", "--openfga-args", "--profiler-enabled"})
	if err != nil {
		t.Fatal(err)
	}
	op := securityOperatorComponent(&c)
	i := slices.Index(op.Args, "--openfga-grpc-addr")
	if i < 0 || op.Args[i+1] != "127.0.0.1:20607" {
		t.Fatalf("security-operator without the OpenFGA gRPC address: %v", op.Args)
	}
	if n := len(op.Args); n < 3 || !slices.Equal(op.Args[n-3:], []string{"--profiling", "--workers", "8"}) {
		t.Fatalf("extra arguments not last: %v", op.Args)
	}
	fga := openFGAComponents(&c)
	if len(fga) != 1 || fga[0].Args[len(fga[0].Args)-1] != "--profiler-enabled" {
		t.Fatalf("OpenFGA's extra arguments: %+v", fga)
	}

	c.ExternalOpenFGA = "https://fga.example.com"
	if op := securityOperatorComponent(&c); slices.Contains(op.Args, "--openfga-grpc-addr") {
		t.Fatalf("an external OpenFGA's gRPC address is not known: %v", op.Args)
	}
}

// TestOrganizationStores: --organization-stores reaches the
// security-operator (nothing by default: its own default); another value
// is refused.
func TestOrganizationStores(t *testing.T) {
	c, err := ParseFlags([]string{"--bin-dir", "/bin"})
	if err != nil {
		t.Fatal(err)
	}
	if op := securityOperatorComponent(&c); slices.Contains(op.Args, "--organization-stores") {
		t.Fatalf("--organization-stores passed without being asked for: %v", op.Args)
	}
	if c, err = ParseFlags([]string{"--bin-dir", "/bin", "--organization-stores", "shared"}); err != nil {
		t.Fatal(err)
	}
	op := securityOperatorComponent(&c)
	if i := slices.Index(op.Args, "--organization-stores"); i < 0 || op.Args[i+1] != "shared" {
		t.Fatalf("security-operator without --organization-stores shared: %v", op.Args)
	}
	if _, err := ParseFlags([]string{"--bin-dir", "/bin", "--organization-stores", "one"}); err == nil || !strings.Contains(err.Error(), "--organization-stores") {
		t.Fatalf("--organization-stores one: %v", err)
	}
}

// TestOpenFGAKey: the platform's own OpenFGA gets a key file in the root
// directory (its path, never the key, in OpenFGA's environment), and its
// two clients the same file; an external OpenFGA's key file must exist and
// be private.
func TestOpenFGAKey(t *testing.T) {
	c, err := ParseFlags([]string{"--bin-dir", "/bin", "--root-directory", "/srv/mp"})
	if err != nil {
		t.Fatal(err)
	}
	c.RootDir = "/srv/mp"
	want := []string{"--openfga-preshared-key-file", "/srv/mp/openfga/preshared.key"}
	for _, comp := range []Component{securityOperatorComponent(&c), rebacComponent(&c)} {
		if i := slices.Index(comp.Args, want[0]); i < 0 || comp.Args[i+1] != want[1] {
			t.Errorf("%s is not given the key file: %v", comp.Name, comp.Args)
		}
	}
	if slices.Contains(accountOperatorComponent(&c).Args, want[0]) {
		t.Error("the account-operator, which does not talk to OpenFGA, is given the key")
	}
	fga := openFGAComponents(&c)[0]
	if !slices.Equal(fga.Environ, []string{"OPENFGA_AUTHN_PRESHARED_KEYS_FILE=" + want[1]}) {
		t.Errorf("OpenFGA's environment: %v", fga.Environ)
	}

	dir := t.TempDir()
	key := filepath.Join(dir, "key")
	if err := ensureKeyFile(key); err != nil {
		t.Fatal(err)
	}
	first, _ := os.ReadFile(key)
	if err := os.Chmod(key, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := ensureKeyFile(key); err != nil {
		t.Fatal(err)
	}
	again, _ := os.ReadFile(key)
	if st, _ := os.Stat(key); string(first) != string(again) || len(strings.TrimSpace(string(first))) != 64 || st.Mode().Perm() != 0o600 {
		t.Errorf("the key is not kept, 64 hex digits and 0600: %q then %q, mode %v", first, again, st.Mode().Perm())
	}

	if err := os.Chmod(key, 0o640); err != nil {
		t.Fatal(err)
	}
	if _, err := ParseFlags([]string{"--bin-dir", "/bin", "--openfga-url", "http://fga:8080", "--openfga-preshared-key-file", key}); err == nil {
		t.Error("an external key file readable by others was accepted")
	}
	if err := os.Chmod(key, 0o600); err != nil {
		t.Fatal(err)
	}
	c, err = ParseFlags([]string{"--bin-dir", "/bin", "--openfga-url", "http://fga:8080", "--openfga-preshared-key-file", key})
	if err != nil {
		t.Fatal(err)
	}
	if op := securityOperatorComponent(&c); !slices.Contains(op.Args, key) {
		t.Errorf("the security-operator is not given the external key file: %v", op.Args)
	}
	if _, err := ParseFlags([]string{"--bin-dir", "/bin", "--openfga-preshared-key-file", key}); err == nil {
		t.Error("--openfga-preshared-key-file without --openfga-url was accepted")
	}
}
