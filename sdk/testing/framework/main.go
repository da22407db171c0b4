package framework

import (
	"crypto/rand"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

var shared struct {
	mu      sync.Mutex
	opts    []Option
	started bool
	srv     *Server
	err     error
	// errReported is set once a test has shown the full start error.
	errReported bool
}

// RunMain runs the tests of a package that shares one server: the server is
// started by the first test calling SharedServer (so `go test -run X` for a
// test that brings its own server starts no shared one), and stopped when
// all tests are done. Its log tail is printed if any test failed, and its
// root directory is kept in that case. In external mode the shared server
// is the external one. Use it from TestMain:
//
//	func TestMain(m *testing.M) { os.Exit(framework.RunMain(m)) }
func RunMain(m *testing.M, opts ...Option) int {
	shared.mu.Lock()
	shared.opts = opts
	shared.mu.Unlock()

	code := m.Run()

	shared.mu.Lock()
	srv := shared.srv
	shared.mu.Unlock()
	if srv != nil {
		if code != 0 && !srv.External {
			fmt.Fprintf(os.Stderr, "framework: tests failed; shared meshplane log (%s), last %d lines:\n%s\n", srv.LogPath, dumpLines, srv.LogTail(0, dumpLines))
		}
		if err := srv.Cleanup(code != 0); err != nil {
			fmt.Fprintf(os.Stderr, "framework: stopping the shared meshplane: %v\n", err)
			if code == 0 {
				code = 1
			}
		}
	}
	CleanupBinaries()
	return code
}

// SharedServer returns the package's shared server, starting it on first
// use (or connecting to the external one). A failure to start fails every
// test that asks for it. The server's log written during the test is dumped
// if the test fails.
func SharedServer(t testing.TB) *Server {
	t.Helper()
	shared.mu.Lock()
	if !shared.started {
		shared.started = true
		started := time.Now()
		if ExternalMode() {
			shared.srv, shared.err = ExternalFromEnv()
		} else {
			shared.srv, shared.err = Start(shared.opts...)
		}
		if shared.err == nil {
			fmt.Fprintf(os.Stderr, "framework: shared meshplane ready in %s at %s (root directory %s, pid %d, external %t)\n",
				time.Since(started).Round(time.Millisecond), shared.srv.BaseURL, shared.srv.RootDir, shared.srv.PID, shared.srv.External)
		}
	}
	srv, err, reported := shared.srv, shared.err, shared.errReported
	shared.errReported = shared.err != nil
	shared.mu.Unlock()
	if err != nil {
		if reported {
			first, _, _ := strings.Cut(err.Error(), "\n")
			t.Fatalf("the shared meshplane server could not be started (details in the first failing test): %s", first)
		}
		t.Fatalf("the shared meshplane server could not be started: %v", err)
	}
	if !srv.Running() {
		t.Fatalf("the shared meshplane server (pid %d) is not running any more; log tail:\n%s", srv.PID, srv.LogTail(0, dumpLines))
	}
	srv.DumpLogsOnFailure(t)
	return srv
}

// UniqueName returns prefix-<5 random lowercase letters or digits>, a valid
// logical cluster name and DNS label when prefix is one.
func UniqueName(prefix string) string {
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, 5)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return prefix + "-" + string(b)
}

// Eventually polls cond every interval until it returns true or timeout
// passes, then fails the test with what and the last reason cond gave.
func Eventually(t testing.TB, timeout, interval time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok, reason := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s; last observation: %s", timeout, what, reason)
		}
		time.Sleep(interval)
	}
}
