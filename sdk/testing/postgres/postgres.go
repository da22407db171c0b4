package postgres

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/meshplane/meshplane/sdk/process"
)

// ErrNotInstalled: no PostgreSQL binaries were found.
var ErrNotInstalled = errors.New("PostgreSQL binaries not found (run scripts/install-test-deps.sh or set MESHPLANE_POSTGRES_BIN_DIR)")

// Superuser is the name of the superuser initdb creates.
const Superuser = "postgres"

// Options of Start; the zero value is fine.
type Options struct {
	// BinDir holds initdb, postgres and pg_isready; default: see FindBinDir.
	BinDir string
	// Port to listen on (127.0.0.1); 0 picks a free one.
	Port int
	// Password of Superuser; empty: a random one.
	Password string
	// Keep leaves the directory in place after Stop (for debugging).
	Keep bool
}

// Server is a running PostgreSQL server.
type Server struct {
	// Host and Port it listens on (TCP only).
	Host string
	Port int
	// Password of Superuser.
	Password string
	// Dir holds the data directory (data/) and the server log (postgres.log).
	Dir string

	cmd     *exec.Cmd
	exited  chan struct{}
	waitErr error
	keep    bool
}

// FindBinDir returns $MESHPLANE_POSTGRES_BIN_DIR, else the newest
// /usr/lib/postgresql/<version>/bin holding postgres, else the directory of
// initdb on PATH.
func FindBinDir() (string, error) {
	if d := os.Getenv("MESHPLANE_POSTGRES_BIN_DIR"); d != "" {
		return d, nil
	}
	matches, _ := filepath.Glob("/usr/lib/postgresql/*/bin/postgres")
	sort.Slice(matches, func(i, j int) bool { return version(matches[i]) < version(matches[j]) })
	if len(matches) > 0 {
		return filepath.Dir(matches[len(matches)-1]), nil
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			p = r
		}
		return filepath.Dir(p), nil
	}
	return "", ErrNotInstalled
}

// version is the major version in /usr/lib/postgresql/<version>/bin/postgres.
func version(p string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(p))))
	return v
}

// Start runs initdb and starts postgres, returning once it accepts
// connections (or ctx ends).
func Start(ctx context.Context, opts Options) (*Server, error) {
	bin := opts.BinDir
	if bin == "" {
		var err error
		if bin, err = FindBinDir(); err != nil {
			return nil, err
		}
	}
	for _, b := range []string{"initdb", "postgres", "pg_isready"} {
		if _, err := os.Stat(filepath.Join(bin, b)); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrNotInstalled, err)
		}
	}
	cred, err := runAs()
	if err != nil {
		return nil, err
	}
	port := opts.Port
	if port == 0 {
		ports, err := process.FreePorts(1)
		if err != nil {
			return nil, err
		}
		port = ports[0]
	}
	// The postgres OS user must reach the directory: a private $TMPDIR
	// (mode 0700, root's) would stop it, /tmp does not.
	parent := os.TempDir()
	if cred != nil && !worldReachable(parent) {
		parent = "/tmp"
	}
	dir, err := os.MkdirTemp(parent, "meshplane-postgres-")
	if err != nil {
		return nil, err
	}
	s := &Server{Host: "127.0.0.1", Port: port, Dir: dir, keep: opts.Keep, exited: make(chan struct{})}
	fail := func(err error) (*Server, error) {
		if !s.keep {
			os.RemoveAll(dir)
		}
		return nil, err
	}
	if cred != nil {
		if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
			return fail(err)
		}
	}
	s.Password = opts.Password
	if s.Password == "" {
		s.Password = randomHex(16)
	}
	pwfile := filepath.Join(dir, "pwfile")
	if err := writeOwned(pwfile, s.Password+"\n", cred); err != nil {
		return fail(err)
	}
	initdb := exec.CommandContext(ctx, filepath.Join(bin, "initdb"),
		"-D", filepath.Join(dir, "data"), "-U", Superuser, "--pwfile", pwfile,
		"--auth", "scram-sha-256", "-E", "UTF8", "--no-locale", "--no-sync", "--no-instructions")
	initdb.SysProcAttr = sysProcAttr(cred)
	initdb.Dir = dir
	out, err := initdb.CombinedOutput()
	os.Remove(pwfile)
	if err != nil {
		return fail(fmt.Errorf("initdb: %v\n%s", err, out))
	}
	logPath := filepath.Join(dir, "postgres.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return fail(err)
	}
	defer logFile.Close()
	s.cmd = exec.Command(filepath.Join(bin, "postgres"), "-D", filepath.Join(dir, "data"),
		"-c", "listen_addresses=127.0.0.1", "-c", "port="+strconv.Itoa(port),
		"-c", "unix_socket_directories="+dir,
		// A throwaway server: durability is not needed.
		"-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off")
	s.cmd.SysProcAttr = sysProcAttr(cred)
	s.cmd.Dir = dir
	s.cmd.Stdout, s.cmd.Stderr = logFile, logFile
	if err := s.cmd.Start(); err != nil {
		return fail(fmt.Errorf("starting postgres: %w", err))
	}
	go func() {
		s.waitErr = s.cmd.Wait()
		close(s.exited)
	}()
	if err := s.waitReady(ctx, bin); err != nil {
		s.kill()
		log, _ := os.ReadFile(logPath)
		return fail(fmt.Errorf("%w\npostgres log:\n%s", err, tail(string(log), 4000)))
	}
	return s, nil
}

// waitReady polls pg_isready until the server accepts connections.
func (s *Server) waitReady(ctx context.Context, bin string) error {
	for {
		check := exec.CommandContext(ctx, filepath.Join(bin, "pg_isready"), "-q",
			"-h", s.Host, "-p", strconv.Itoa(s.Port), "-U", Superuser, "-d", "postgres")
		if check.Run() == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("postgres on port %d not ready: %w", s.Port, ctx.Err())
		case <-s.exited:
			return fmt.Errorf("postgres exited before accepting connections: %v", s.waitErr)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// ForTest starts a server for t (failing it on error) and stops it in
// t.Cleanup.
func ForTest(t testing.TB) *Server {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s, err := Start(ctx, Options{})
	if err != nil {
		t.Fatalf("starting PostgreSQL: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Stop(); err != nil {
			t.Errorf("stopping PostgreSQL: %v", err)
		}
	})
	return s
}

// DSN is a postgres:// URL for Superuser on database ("postgres" if empty).
func (s *Server) DSN(database string) string {
	return s.UserDSN(Superuser, s.Password, database)
}

// UserDSN is a postgres:// URL for any role on database ("postgres" if
// empty).
func (s *Server) UserDSN(user, password, database string) string {
	if database == "" {
		database = "postgres"
	}
	u := url.URL{Scheme: "postgres", User: url.UserPassword(user, password),
		Host: fmt.Sprintf("%s:%d", s.Host, s.Port), Path: "/" + database, RawQuery: "sslmode=disable"}
	return u.String()
}

// PID of the postmaster.
func (s *Server) PID() int { return s.cmd.Process.Pid }

// Stop asks postgres for a fast shutdown (SIGINT: clients are disconnected),
// kills its process group if it has not exited within 30s, and removes Dir
// (unless Options.Keep).
func (s *Server) Stop() error {
	var err error
	select {
	case <-s.exited:
		err = fmt.Errorf("postgres (pid %d) had already exited: %v", s.PID(), s.waitErr)
	default:
		_ = s.cmd.Process.Signal(syscall.SIGINT)
		select {
		case <-s.exited:
		case <-time.After(30 * time.Second):
			s.kill()
			err = fmt.Errorf("postgres (pid %d) did not exit within 30s of SIGINT; killed", s.PID())
		}
	}
	if !s.keep {
		if rmErr := os.RemoveAll(s.Dir); rmErr != nil && err == nil {
			err = rmErr
		}
	}
	return err
}

// kill SIGKILLs the process group and waits for the postmaster to be gone.
func (s *Server) kill() {
	_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	_ = s.cmd.Process.Kill()
	select {
	case <-s.exited:
	case <-time.After(30 * time.Second):
	}
}

// runAs is the credential of the postgres OS user when running as root, nil
// otherwise.
func runAs() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup(Superuser)
	if err != nil {
		return nil, fmt.Errorf("running as root, and initdb refuses root: need the %q OS user (Debian's postgresql package creates it): %w", Superuser, err)
	}
	uid, err := strconv.ParseUint(u.Uid, 10, 32)
	if err != nil {
		return nil, err
	}
	gid, err := strconv.ParseUint(u.Gid, 10, 32)
	if err != nil {
		return nil, err
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), NoSetGroups: true}, nil
}

// worldReachable reports whether every directory on the way to dir may be
// entered by any user.
func worldReachable(dir string) bool {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return false
	}
	for {
		fi, err := os.Stat(dir)
		if err != nil || fi.Mode().Perm()&0o001 == 0 {
			return false
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return true
		}
		dir = parent
	}
}

func writeOwned(path, content string, cred *syscall.Credential) error {
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		return err
	}
	if cred != nil {
		return os.Chown(path, int(cred.Uid), int(cred.Gid))
	}
	return nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func tail(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return strings.TrimRight(s, "\n")
}
