// Package e2e runs the PostgreSQL example provider against a real core and
// a throwaway PostgreSQL server (sdk/testing/postgres): the README's
// walk-through, and the provider process through real databases, roles,
// extensions, the claim on secrets and deletion, checked with SQL.
package e2e

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/meshplane/meshplane/sdk/testing/framework"
	"github.com/meshplane/meshplane/sdk/testing/postgres"
)

var (
	pgOnce sync.Once
	pg     *postgres.Server
	pgErr  error
)

func TestMain(m *testing.M) {
	code := framework.RunMain(m)
	if pg != nil {
		if err := pg.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stopping PostgreSQL:", err)
		}
	}
	os.Exit(code)
}

// server is the package's PostgreSQL server, started on first use.
func server(t *testing.T) *postgres.Server {
	t.Helper()
	pgOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		pg, pgErr = postgres.Start(ctx, postgres.Options{})
	})
	if pgErr != nil {
		t.Fatalf("starting PostgreSQL: %v", pgErr)
	}
	return pg
}
