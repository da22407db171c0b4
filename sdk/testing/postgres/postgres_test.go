package postgres

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// psql runs one statement through psql from the server's package with dsn.
func psql(t *testing.T, dsn, sql string) (string, error) {
	t.Helper()
	bin, err := FindBinDir()
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(filepath.Join(bin, "psql"), "-X", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-c", sql, dsn).CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

func TestStartQueryStop(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s, err := Start(ctx, Options{})
	if err != nil {
		t.Fatal(err)
	}
	out, err := psql(t, s.DSN(""), "SELECT rolsuper FROM pg_roles WHERE rolname = current_user")
	if err != nil || out != "t" {
		t.Fatalf("superuser query: %q, %v", out, err)
	}
	if out, err := psql(t, s.UserDSN(Superuser, "wrong", ""), "SELECT 1"); err == nil || !strings.Contains(out, "password authentication failed") {
		t.Fatalf("a wrong password must be refused, got %q, %v", out, err)
	}
	pid := s.PID()
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, 0); err == nil {
		t.Fatalf("postmaster %d still running after Stop", pid)
	}
	if _, err := os.Stat(s.Dir); !os.IsNotExist(err) {
		t.Fatalf("%s not removed: %v", s.Dir, err)
	}
}

func TestForTestTwoServers(t *testing.T) {
	a, b := ForTest(t), ForTest(t)
	if a.Port == b.Port || a.Password == b.Password {
		t.Fatalf("two servers share port or password: %d/%d", a.Port, b.Port)
	}
	if _, err := psql(t, a.DSN(""), "CREATE DATABASE only_a"); err != nil {
		t.Fatal(err)
	}
	out, err := psql(t, b.DSN(""), "SELECT count(*) FROM pg_database WHERE datname = 'only_a'")
	if err != nil || out != "0" {
		t.Fatalf("server b sees server a's database: %q, %v", out, err)
	}
}

// TestPrivateTmpdir: a $TMPDIR the postgres OS user cannot enter (as
// t.TempDir's are) does not stop the server.
func TestPrivateTmpdir(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	s := ForTest(t)
	if out, err := psql(t, s.DSN(""), "SELECT 1"); err != nil || out != "1" {
		t.Fatalf("SELECT 1: %q %v", out, err)
	}
}
