package framework

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"syscall"
	"time"
)

// Process is a child process started by the kit: a meshplane server, or any
// command a benchmark or test wants to run beside its tests. It runs in its
// own process group and, on Linux, is killed when the process that started it
// dies, so an aborted test run leaves nothing behind.
type Process struct {
	cmd     *exec.Cmd
	started time.Time
	exited  chan struct{}
	waitErr error
}

// StartProcess starts cmd (its Stdout, Stderr and Dir are the caller's) and
// returns at once; see WaitReady to wait for a server to answer.
func StartProcess(cmd *exec.Cmd) (*Process, error) {
	cmd.SysProcAttr = sysProcAttr()
	p := &Process{cmd: cmd, exited: make(chan struct{})}
	p.started = time.Now()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", cmd.Path, err)
	}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// StartShell runs cmdline through /bin/sh with "exec" prepended, so the shell
// is replaced by the command and PID is the command's own (which matters for
// RSS sampling). Output goes to out.
func StartShell(cmdline string, out io.Writer) (*Process, error) {
	if cmdline == "" {
		return nil, errors.New("empty start command")
	}
	cmd := exec.Command("/bin/sh", "-c", "exec "+cmdline)
	cmd.Stdout, cmd.Stderr = out, out
	return StartProcess(cmd)
}

// PID of the process.
func (p *Process) PID() int { return p.cmd.Process.Pid }

// Started is the time just before the process was started.
func (p *Process) Started() time.Time { return p.started }

// Exited is closed once the process has exited.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// ExitErr is the result of waiting for the process; only valid after Exited.
func (p *Process) ExitErr() error { return p.waitErr }

// Running reports whether the process is alive.
func (p *Process) Running() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// Stop sends SIGTERM and waits up to timeout for the process to exit, then
// SIGKILLs its process group. It returns an error if the process had already
// exited or had to be killed; the exit status after SIGTERM is ExitErr.
func (p *Process) Stop(timeout time.Duration) error {
	select {
	case <-p.exited:
		return fmt.Errorf("pid %d had already exited: %v", p.PID(), p.waitErr)
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
		return nil
	case <-time.After(timeout):
	}
	p.killGroup()
	select {
	case <-p.exited:
	case <-time.After(30 * time.Second):
	}
	return fmt.Errorf("pid %d did not exit within %s of SIGTERM; killed", p.PID(), timeout)
}

// Kill sends SIGKILL to the process group and waits (up to 30s) for the
// process to be gone.
func (p *Process) Kill() error {
	p.killGroup()
	select {
	case <-p.exited:
		return nil
	case <-time.After(30 * time.Second):
		return fmt.Errorf("pid %d still running 30s after SIGKILL", p.PID())
	}
}

// WaitReady polls url (TLS not verified) every interval until it answers
// 200, ctx ends, or exited (if non-nil) is closed. It returns the time of
// the first 200.
func WaitReady(ctx context.Context, url string, interval time.Duration, exited <-chan struct{}) (time.Time, error) {
	client := InsecureHTTPClient(5 * time.Second)
	defer client.CloseIdleConnections()
	last := "no answer yet"
	for {
		code, body, err := Probe(ctx, client, url)
		if err == nil && code == http.StatusOK {
			return time.Now(), nil
		}
		if err != nil {
			last = err.Error()
		} else {
			last = fmt.Sprintf("%d %s", code, body)
		}
		select {
		case <-ctx.Done():
			return time.Time{}, fmt.Errorf("%s not ready (last answer: %s): %w", url, last, ctx.Err())
		case <-exited:
			return time.Time{}, fmt.Errorf("the server exited before %s answered 200 (last answer: %s)", url, last)
		case <-time.After(interval):
		}
	}
}

// Probe performs one GET of url and returns the status code and the start
// of the body.
func Probe(ctx context.Context, client *http.Client, url string) (int, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, "", err
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	return resp.StatusCode, string(body), nil
}

// InsecureHTTPClient returns a client that skips TLS verification and does
// not follow redirects; meant for readiness probes of local test servers.
func InsecureHTTPClient(timeout time.Duration) *http.Client {
	return &http.Client{
		Timeout: timeout,
		Transport: &http.Transport{
			TLSClientConfig:   &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // local test server with a self-signed certificate
			ForceAttemptHTTP2: true,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// FreePorts returns n distinct free TCP ports on 127.0.0.1. Another process
// may take one before it is used: retry on "address already in use".
func FreePorts(n int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	ports := make([]int, 0, n)
	for i := 0; i < n; i++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("finding a free port: %w", err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
