// Package openfga starts a real OpenFGA server for tests: bin/openfga (the
// operators module's build of OpenFGA's own server command) on free
// loopback ports, with a SQLite store in a temporary directory (or another
// datastore), the check-query and iterator caches on and the model limits
// the platform uses. It stops with the test (or the test binary).
package openfga

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/meshplane/meshplane/sdk/process"
	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// The model limits the platform configures (see apis/fga: MaxTypesPerModel,
// MaxModelSizeBytes); OpenFGA's defaults are 100 types and 256 KiB.
const (
	MaxTypesPerModel  = 2000
	MaxModelSizeBytes = 8 << 20
)

// Server is a running OpenFGA.
type Server struct {
	// URL is the HTTP API (http://127.0.0.1:<port>).
	URL string
	// GRPC is the gRPC address (127.0.0.1:<port>).
	GRPC string
	// Metrics is the Prometheus address.
	Metrics string

	proc *process.Process
	log  *process.Buffer
}

// Options say how to run it.
type Options struct {
	// Engine and URI select the datastore; default sqlite in dir.
	Engine, URI string
	// PresharedKey, when set, is the one API key OpenFGA accepts (authn
	// method "preshared"), handed over in a 0600 file in dir as the
	// platform does (OPENFGA_AUTHN_PRESHARED_KEYS_FILE).
	PresharedKey string
	// Args are more `openfga run` arguments (e.g. the profiler's).
	Args []string
}

// Binary is the path of the openfga binary (OPENFGA_BIN, bin/openfga, or
// built from the operators module).
func Binary() (string, error) { return framework.Binary("openfga", "operators", "./cmd/openfga") }

// Args are the `openfga run` arguments of a platform OpenFGA: its
// datastore, its three addresses, the caches on and the model limits.
func Args(engine, uri, httpAddr, grpcAddr, metricsAddr string) []string {
	return []string{"run",
		"--datastore-engine", engine, "--datastore-uri", uri,
		"--http-addr", httpAddr, "--grpc-addr", grpcAddr, "--metrics-addr", metricsAddr,
		"--playground-enabled=false", "--log-format", "json",
		"--check-query-cache-enabled", "--check-iterator-cache-enabled",
		// Invalidate the caches on tuple writes, so a revoked grant stops
		// answering allowed within a second, not after the cache TTL.
		"--cache-controller-enabled", "--cache-controller-ttl", "1s",
		"--max-types-per-authorization-model", strconv.Itoa(MaxTypesPerModel),
		"--max-authorization-model-size-in-bytes", strconv.Itoa(MaxModelSizeBytes),
	}
}

// Migrate runs `openfga migrate` for a SQL datastore.
func Migrate(ctx context.Context, bin, engine, uri string) error {
	out, err := exec.CommandContext(ctx, bin, "migrate", "--datastore-engine", engine, "--datastore-uri", uri).CombinedOutput()
	if err != nil {
		return fmt.Errorf("openfga migrate (%s): %w: %s", engine, err, out)
	}
	return nil
}

// Start starts OpenFGA for t and stops it when t ends.
func Start(t testing.TB, opts Options) *Server {
	t.Helper()
	s, err := StartServer(context.Background(), t.TempDir(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Stop(); err != nil {
			t.Logf("stopping openfga: %v", err)
		}
		if t.Failed() {
			t.Logf("openfga log (tail):\n%s", s.LogTail(4000))
		}
	})
	return s
}

// StartServer starts OpenFGA with state in dir (for TestMain); the caller
// stops it.
func StartServer(ctx context.Context, dir string, opts Options) (*Server, error) {
	bin, err := Binary()
	if err != nil {
		return nil, err
	}
	if opts.Engine == "" {
		opts.Engine, opts.URI = "sqlite", "file:"+filepath.Join(dir, "openfga.db")
	}
	if opts.Engine != "memory" {
		if err := Migrate(ctx, bin, opts.Engine, opts.URI); err != nil {
			return nil, err
		}
	}
	ports, err := process.FreePorts(3)
	if err != nil {
		return nil, err
	}
	addr := func(p int) string { return "127.0.0.1:" + strconv.Itoa(p) }
	s := &Server{URL: "http://" + addr(ports[0]), GRPC: addr(ports[1]), Metrics: addr(ports[2]), log: &process.Buffer{}}
	cmd := exec.Command(bin, append(Args(opts.Engine, opts.URI, addr(ports[0]), addr(ports[1]), addr(ports[2])), opts.Args...)...)
	cmd.Stdout, cmd.Stderr = s.log, s.log
	if opts.PresharedKey != "" {
		keyFile := filepath.Join(dir, "preshared.key")
		if err := os.WriteFile(keyFile, []byte(opts.PresharedKey+"\n"), 0o600); err != nil {
			return nil, err
		}
		cmd.Env = append(os.Environ(), "OPENFGA_AUTHN_PRESHARED_KEYS_FILE="+keyFile)
	}
	if s.proc, err = process.StartProcess(cmd); err != nil {
		return nil, err
	}
	readyCtx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if _, err := process.WaitReady(readyCtx, s.URL+"/healthz", 100*time.Millisecond, s.proc.Exited()); err != nil {
		_ = s.proc.Kill()
		return nil, fmt.Errorf("openfga not ready: %w\n%s", err, s.LogTail(4000))
	}
	return s, nil
}

// Stop stops the server (SIGTERM, then SIGKILL after 20s).
func (s *Server) Stop() error {
	if !s.proc.Running() {
		return nil
	}
	return s.proc.Stop(20 * time.Second)
}

// PID is the server's process id (for its CPU time in /proc/<pid>/stat).
func (s *Server) PID() int { return s.proc.PID() }

// LogTail is the end of the server's log.
func (s *Server) LogTail(n int) string {
	b := s.log.String()
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return b
}
