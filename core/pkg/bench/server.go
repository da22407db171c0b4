package bench

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// Server is a server process started by the benchmark.
type Server struct {
	cmd     *exec.Cmd
	started time.Time
	done    chan struct{}
	waitErr error
}

// StartServer runs cmdline through /bin/sh with "exec" prepended, so the
// shell is replaced by the server and the returned PID is the server's own
// (which matters for RSS sampling). Output goes to out. The process gets
// its own process group so that Stop can also reach helpers it spawned, and
// on Linux it receives SIGTERM should the benchmark die first.
func StartServer(cmdline string, out io.Writer) (*Server, error) {
	if cmdline == "" {
		return nil, errors.New("empty start command")
	}
	cmd := exec.Command("/bin/sh", "-c", "exec "+cmdline)
	cmd.Stdout = out
	cmd.Stderr = out
	cmd.Stdin = nil
	cmd.SysProcAttr = sysProcAttr()
	s := &Server{cmd: cmd, done: make(chan struct{})}
	s.started = time.Now()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %q: %w", cmdline, err)
	}
	go func() {
		s.waitErr = cmd.Wait()
		close(s.done)
	}()
	return s, nil
}

// PID of the server process.
func (s *Server) PID() int { return s.cmd.Process.Pid }

// Started is the time just before the process was started.
func (s *Server) Started() time.Time { return s.started }

// Exited is closed once the process has exited.
func (s *Server) Exited() <-chan struct{} { return s.done }

// ExitErr is the result of waiting for the process; only valid after Exited.
func (s *Server) ExitErr() error { return s.waitErr }

// Stop sends SIGTERM and waits up to timeout for the process to exit, then
// SIGKILLs its process group. It returns nil if the process exited after
// SIGTERM (whatever its exit status).
func (s *Server) Stop(timeout time.Duration) error {
	select {
	case <-s.done:
		return fmt.Errorf("server had already exited: %v", s.waitErr)
	default:
	}
	pid := s.cmd.Process.Pid
	_ = syscall.Kill(pid, syscall.SIGTERM)
	select {
	case <-s.done:
		return nil
	case <-time.After(timeout):
	}
	_ = syscall.Kill(-pid, syscall.SIGKILL) // process group, created by Setpgid
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
	}
	return fmt.Errorf("server (pid %d) did not exit within %s of SIGTERM; killed", pid, timeout)
}

// InsecureHTTPClient returns a client that skips TLS verification; used
// only for readiness polling.
func InsecureHTTPClient(timeout time.Duration) *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = &tls.Config{InsecureSkipVerify: true} //nolint:gosec // readiness probe of a local test server
	return &http.Client{Transport: tr, Timeout: timeout}
}

// Probe performs one GET of url and returns the HTTP status code.
func Probe(ctx context.Context, client *http.Client, url string) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	resp.Body.Close()
	return resp.StatusCode, nil
}

// WaitReady polls url every interval until it answers 200, ctx ends, or
// exited (if non-nil) is closed. It returns the time of the first 200.
func WaitReady(ctx context.Context, url string, interval time.Duration, exited <-chan struct{}) (time.Time, error) {
	client := InsecureHTTPClient(2 * time.Second)
	defer client.CloseIdleConnections()
	t := time.NewTicker(interval)
	defer t.Stop()
	var lastErr error
	lastCode := 0
	for {
		code, err := Probe(ctx, client, url)
		if err == nil && code == http.StatusOK {
			return time.Now(), nil
		}
		lastErr, lastCode = err, code
		select {
		case <-ctx.Done():
			return time.Time{}, fmt.Errorf("%s not ready (last status %d, last error %v): %w", url, lastCode, lastErr, ctx.Err())
		case <-exited:
			return time.Time{}, fmt.Errorf("server exited before %s became ready", url)
		case <-t.C:
		}
	}
}

// WaitForFile polls until path exists and check(path) succeeds, or ctx
// ends. check may be nil.
func WaitForFile(ctx context.Context, path string, interval time.Duration, check func(string) error) error {
	var lastErr error
	for {
		_, err := os.Stat(path)
		if err == nil && check != nil {
			err = check(path)
		}
		if err == nil {
			return nil
		}
		lastErr = err
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %v: %w", path, lastErr, ctx.Err())
		case <-time.After(interval):
		}
	}
}

// Tail returns at most the last n bytes of a file, for error messages.
func Tail(path string, n int64) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return ""
	}
	off := max(st.Size()-n, 0)
	buf := make([]byte, st.Size()-off)
	if _, err := f.ReadAt(buf, off); err != nil && !errors.Is(err, io.EOF) {
		return ""
	}
	return string(buf)
}
