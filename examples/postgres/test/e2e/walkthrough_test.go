package e2e

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/meshplane/meshplane/examples/internal/exampletest"
	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// TestWalkthrough runs the commands of examples/postgres/README.md.
func TestWalkthrough(t *testing.T) {
	s := framework.SharedServer(t)
	framework.SkipIfExternal(t, "the walk-through creates fixed workspace names in root")
	pg := server(t)
	t.Setenv("POSTGRES_DSN", pg.DSN(""))
	out := exampletest.Walkthrough(t, s, "postgres", map[string]string{
		"provider-kubeconfig": "providers ./cmd/provider-kubeconfig",
		"postgres-provider":   "examples ./postgres/cmd/postgres-provider",
	})
	for _, want := range []string{
		"INSERT 0 1",
		"book | ", // the row with its pgcrypto digest
		"team-b sees 0 orders tables",
		"permission denied for database",
		"team-a was refused, as it should be",
		`database.postgres.examples.meshplane.io "app" deleted`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("walk-through output lacks %q", want)
		}
	}
	// After the deletion team-b's database is left, team-a's is gone.
	conn, err := pgx.Connect(context.Background(), pg.DSN(""))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	bDB := s.KubectlFor("root:team-b").Run(t, "get", "database", "app", "-o", "jsonpath={.status.databaseName}")
	clusterA := strings.TrimSpace(s.KubectlFor("root").Run(t, "get", "workspace", "team-a", "-o", "jsonpath={.spec.cluster}"))
	for db, want := range map[string]bool{bDB: true, clusterA + "_default_app": false} {
		var exists bool
		if err := conn.QueryRow(context.Background(), "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", db).Scan(&exists); err != nil {
			t.Fatal(err)
		}
		if exists != want {
			t.Errorf("database %s exists: %v, want %v", db, exists, want)
		}
	}
}
