package e2e

import (
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/meshplane/meshplane/sdk/process"
	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// TestCLIErrors: a missing DSN is refused with exit status 2, a bad or
// unreachable one with a message and status 1 before anything starts.
func TestCLIErrors(t *testing.T) {
	bin, err := framework.Binary("postgres-provider", "examples", "./postgres/cmd/postgres-provider")
	if err != nil {
		t.Fatal(err)
	}
	ports, err := process.FreePorts(1)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--workspace", "root:p"}, 2, "--dsn (or $POSTGRES_DSN) is required"},
		{[]string{"--workspace", "root:p", "--dsn", "mysql://nope"}, 1, "--dsn"},
		{[]string{"--workspace", "root:p", "--dsn", fmt.Sprintf("postgres://u:p@127.0.0.1:%d/postgres?connect_timeout=2", ports[0])}, 1, "connecting to PostgreSQL"},
	} {
		cmd := exec.Command(bin, tc.args...)
		cmd.Env = []string{"PATH=/usr/bin:/bin"}
		out, err := cmd.CombinedOutput()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != tc.code || !strings.Contains(string(out), tc.want) {
			t.Errorf("%v: exit %v (want %d), output lacks %q?\n%s", tc.args, err, tc.code, tc.want, out)
		}
	}
}
