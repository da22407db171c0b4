package controller

import (
	"context"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"

	postgresv1alpha1 "github.com/meshplane/meshplane/examples/postgres/api/v1alpha1"
)

// ensureExtensions step: CREATE EXTENSION for each of spec.extensions in
// the database, as the provider's role; one the server does not offer is
// reported (UnknownExtension) and not retried. Sets ExtensionsReady.
func (r *reconciler) ensureExtensions(ctx context.Context, s *state) error {
	want := s.db.Spec.Extensions
	if len(want) == 0 {
		setCondition(s, postgresv1alpha1.ConditionExtensions, true, "None", "no extensions requested")
		return nil
	}
	rows, err := r.pool.Query(ctx, "SELECT name FROM pg_available_extensions WHERE name = ANY($1)", want)
	if err != nil {
		setCondition(s, postgresv1alpha1.ConditionExtensions, false, "ServerError", err.Error())
		return err
	}
	available, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		setCondition(s, postgresv1alpha1.ConditionExtensions, false, "ServerError", err.Error())
		return err
	}
	var unknown []string
	for _, e := range want {
		if !slices.Contains(available, e) {
			unknown = append(unknown, e)
		}
	}
	if len(unknown) > 0 {
		msg := fmt.Sprintf("the server does not offer the extensions %v", unknown)
		setCondition(s, postgresv1alpha1.ConditionExtensions, false, "UnknownExtension", msg)
		return &permanentError{msg: msg}
	}
	cfg := r.pool.Config().ConnConfig.Copy()
	cfg.Database = s.database
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		setCondition(s, postgresv1alpha1.ConditionExtensions, false, "ServerError", err.Error())
		return fmt.Errorf("connecting to %s: %w", s.database, err)
	}
	defer conn.Close(ctx)
	for _, e := range want {
		if _, err := conn.Exec(ctx, "CREATE EXTENSION IF NOT EXISTS "+pgx.Identifier{e}.Sanitize()); err != nil {
			setCondition(s, postgresv1alpha1.ConditionExtensions, false, "ServerError", err.Error())
			return fmt.Errorf("creating extension %s: %w", e, err)
		}
	}
	setCondition(s, postgresv1alpha1.ConditionExtensions, true, "Created", fmt.Sprintf("extensions %v created", want))
	return nil
}
