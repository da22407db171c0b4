// Package bench measures the example providers end to end (run by
// scripts/bench.sh with EX_BENCH_RUN=1; skipped otherwise): how long a
// consumer waits from creating a Database until it is Ready (a real
// database, role and Secret) and until a deleted one is gone, and for a
// MongoDB the time to its downstream object and for a downstream status
// change to reach the consumer.
package bench

import (
	"os"
	"testing"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

func TestMain(m *testing.M) { os.Exit(framework.RunMain(m)) }
