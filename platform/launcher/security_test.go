package launcher

import (
	"slices"
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
