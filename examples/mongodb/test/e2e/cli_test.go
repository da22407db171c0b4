package e2e

import (
	"errors"
	"os/exec"
	"strings"
	"testing"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// TestCLIErrors: missing or bad flags are refused with a message and exit
// status 2, a downstream kubeconfig that does not load with status 1.
func TestCLIErrors(t *testing.T) {
	bin, err := framework.Binary("mongodb-provider", "examples", "./mongodb/cmd/mongodb-provider")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		code int
		want []string
	}{
		{nil, 2, []string{"--workspace", "--downstream-kubeconfig is required"}},
		{[]string{"--workspace", "root:a/b", "--downstream-kubeconfig", "x", "--workers", "0"}, 2, []string{`--workspace "root:a/b" is not a workspace path`, "--workers must be at least 1"}},
		{[]string{"--workspace", "root:p", "--kubeconfig", "/nonexistent", "--downstream-kubeconfig", "/nonexistent"}, 1, []string{"loading kubeconfig"}},
	} {
		out, err := exec.Command(bin, tc.args...).CombinedOutput()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != tc.code {
			t.Errorf("%v: exit %v, want %d\n%s", tc.args, err, tc.code, out)
		}
		for _, w := range tc.want {
			if !strings.Contains(string(out), w) {
				t.Errorf("%v: output lacks %q:\n%s", tc.args, w, out)
			}
		}
	}
}
