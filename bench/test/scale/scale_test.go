// Package scale keeps scripts/scale-cost.sh (the scale section of `make
// bench`, issue 27) from rotting: a reduced run, 5 organizations and 3
// accounts in each, through the same script, checking that every figure
// it reports is there. No figure is compared with a target: the machine's
// load decides those.
//
// The script starts bin/meshplane-platform, which runs the binaries beside
// it (`make build`); the test is skipped when they are not built.
package scale

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// needed are the binaries the launcher starts and the script runs.
var needed = []string{"meshplane-platform", "meshplane", "account-operator", "security-operator", "openfga",
	"rebac-authz-webhook", "graphql-gateway", "meshplane-bench"}

func TestScaleCostReduced(t *testing.T) {
	root, err := framework.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(root, "bin")
	if p := os.Getenv(framework.BinaryEnv("meshplane-platform")); p != "" {
		bin = filepath.Dir(p)
	}
	for _, b := range needed {
		if _, err := os.Stat(filepath.Join(bin, b)); err != nil {
			t.Skipf("%s not built (make build): %v", b, err)
		}
	}
	cmd := exec.Command(filepath.Join(root, "scripts", "scale-cost.sh"), bin)
	cmd.Env = append(os.Environ(), "ORGS=5", "ACCOUNTS=15", "SETTLE=1", "PROFILE_TOP=5", "REST=1", "REST_SETTLE=1",
		fmt.Sprintf("PORT_BASE=%d", freeRange(t, 20)))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("scale-cost.sh: %v\nstdout:\n%s\nstderr:\n%s", err, out, stderr.String())
	}
	report := string(out)
	t.Log(report)

	// A row per process the launcher runs; those serving pprof with a live
	// heap in every column, the restarted platform's (REST=1) included.
	pair := `\d+ / \d+ MiB` // RSS / live heap
	withHeap := regexp.MustCompile(`(?m)^\| (meshplane|openfga|account-operator|security-operator) \| ` +
		pair + ` \| ` + pair + ` \| ` + pair + ` \| -?[\d.]+ KiB / -?[\d.]+ KiB \| -?[\d.]+ KiB / -?[\d.]+ KiB \| ` +
		pair + ` \| -?[\d.]+ KiB / -?[\d.]+ KiB \|$`)
	if got := len(withHeap.FindAllString(report, -1)); got != 4 {
		t.Errorf("rows with RSS and live heap for the core, OpenFGA and the operators: %d, want 4", got)
	}
	for _, row := range []string{"| rebac-authz-webhook | ", "| graphql-gateway | ", "| **all** | ", "restarted, at rest"} {
		if !strings.Contains(report, row) {
			t.Errorf("no row %q", row)
		}
	}
	if !regexp.MustCompile(`CPU, all processes .*: [\d.]+ ms per org, -?[\d.]+ ms per account`).MatchString(report) {
		t.Error("no CPU per org and per account")
	}
	for _, p := range []string{"meshplane", "openfga", "account-operator", "security-operator"} {
		if !regexp.MustCompile(`Top of ` + p + ` live heap at 10 orgs \+ 15 accounts[^\n]*\n` + "```\n" + `Showing nodes`).MatchString(report) {
			t.Errorf("no top of %s's heap profile", p)
		}
	}
	if !strings.Contains(report, "org Accounts Ready (5 in root:orgs)") || !strings.Contains(report, "accounts Ready (15 over 5 orgs)") {
		t.Error("no rates of the two stages")
	}
}

// freeRange returns a base port B with B..B+n-1 free on 127.0.0.1 when
// asked (racy, like any free-port picking).
func freeRange(t *testing.T, n int) int {
	t.Helper()
	start := 40000 + rand.IntN(500)*n
	for b := start; b < start+20000; b += n * 7 {
		free := true
		for p := b; p < b+n && free; p++ {
			l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
			if err != nil {
				free = false
				break
			}
			l.Close()
		}
		if free {
			return b
		}
	}
	t.Fatal("no free port range")
	return 0
}
