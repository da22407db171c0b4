// Package postgres starts a throwaway PostgreSQL server for a test: initdb in
// a fresh temp directory, then postgres listening on a free 127.0.0.1 port
// (TCP only, password authentication), stopped by PID and removed by Stop.
//
//	srv, err := postgres.Start(ctx, postgres.Options{})
//	if err != nil { ... }            // errors.Is(err, postgres.ErrNotInstalled): run scripts/install-test-deps.sh
//	defer srv.Stop()
//	dsn := srv.DSN("postgres")       // superuser postgres with a random password
//
// In a test, ForTest starts one and stops it in t.Cleanup.
//
// The binaries (initdb, postgres, pg_isready) come from Debian's postgresql
// package (scripts/install-test-deps.sh, part of `make test-deps`): the
// newest /usr/lib/postgresql/<version>/bin, or $MESHPLANE_POSTGRES_BIN_DIR.
// initdb and postgres refuse to run as root, and tests here run as root: then
// both run as the `postgres` OS user (the package creates it), in a directory
// that user owns.
package postgres
