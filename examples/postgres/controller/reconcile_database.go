package controller

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	postgresv1alpha1 "github.com/meshplane/meshplane/examples/postgres/api/v1alpha1"
)

// ensureDatabase step: the owner role (LOGIN, nothing else) with the
// password of readCredentials, and the database it owns, closed to
// PUBLIC so no other role may connect; sets DatabaseReady.
func (r *reconciler) ensureDatabase(ctx context.Context, s *state) error {
	fail := func(err error) error {
		setCondition(s, postgresv1alpha1.ConditionDatabase, false, "ServerError", err.Error())
		return err
	}
	role, db := pgx.Identifier{s.role}.Sanitize(), pgx.Identifier{s.database}.Sanitize()
	var roleExists, dbExists bool
	if err := r.pool.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = $1)", s.role).Scan(&roleExists); err != nil {
		return fail(fmt.Errorf("looking up role %s: %w", s.role, err))
	}
	pw := ""
	if s.password != "" {
		pw = " PASSWORD " + literal(s.password)
	}
	switch {
	case !roleExists:
		if _, err := r.pool.Exec(ctx, "CREATE ROLE "+role+" LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION"+pw); err != nil {
			return fail(fmt.Errorf("creating role %s: %w", s.role, err))
		}
	case s.newPassword:
		if _, err := r.pool.Exec(ctx, "ALTER ROLE "+role+pw); err != nil {
			return fail(fmt.Errorf("setting the password of role %s: %w", s.role, err))
		}
	}
	if err := r.pool.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", s.database).Scan(&dbExists); err != nil {
		return fail(fmt.Errorf("looking up database %s: %w", s.database, err))
	}
	if !dbExists {
		if _, err := r.pool.Exec(ctx, "CREATE DATABASE "+db+" OWNER "+role); err != nil {
			return fail(fmt.Errorf("creating database %s: %w", s.database, err))
		}
	}
	if _, err := r.pool.Exec(ctx, "REVOKE ALL ON DATABASE "+db+" FROM PUBLIC"); err != nil {
		return fail(fmt.Errorf("closing database %s to PUBLIC: %w", s.database, err))
	}
	s.db.Status.DatabaseName, s.db.Status.RoleName = s.database, s.role
	setCondition(s, postgresv1alpha1.ConditionDatabase, true, "Created", "database "+s.database+" owned by role "+s.role)
	return nil
}

// literal quotes a string as an SQL literal (CREATE/ALTER ROLE take no
// parameters).
func literal(v string) string {
	return "'" + strings.ReplaceAll(v, "'", "''") + "'"
}
