package app

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/meshplane/meshplane/bench/pkg/bench"
	"github.com/meshplane/meshplane/bench/pkg/bench/kubebench"
	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// server wraps a started server process and its log file.
type server struct {
	*framework.Process
	logPath string
	tmpLog  bool
	logFile *os.File
}

// startServer starts --start-cmd with the test kit's launcher, measures
// start-to-ready against --ready-url and waits until the kubeconfig can be
// loaded.
func startServer(ctx context.Context, o *options, rep *bench.Report, logf func(string, ...any)) (*server, error) {
	// Refuse to measure a server that is already running at the URL.
	pctx, pcancel := context.WithTimeout(ctx, 2*time.Second)
	code, _, err := framework.Probe(pctx, framework.InsecureHTTPClient(2*time.Second), o.readyURL)
	pcancel()
	if err == nil {
		return nil, fmt.Errorf("something already answers at %s (HTTP %d); refusing to start a second server", o.readyURL, code)
	}

	s := &server{logPath: o.serverLog}
	if s.logPath == "" {
		f, err := os.CreateTemp("", "meshplane-bench-server-*.log")
		if err != nil {
			return nil, err
		}
		s.logFile, s.logPath, s.tmpLog = f, f.Name(), true
	} else {
		f, err := os.Create(s.logPath)
		if err != nil {
			return nil, fmt.Errorf("--server-log: %w", err)
		}
		s.logFile = f
	}

	logf("starting server: %s (output: %s)", o.startCmd, s.logPath)
	p, err := framework.StartShell(o.startCmd, s.logFile)
	if err != nil {
		s.logFile.Close()
		return nil, err
	}
	s.Process = p

	rctx, rcancel := context.WithTimeout(ctx, o.readyTimeout)
	defer rcancel()
	readyAt, err := framework.WaitReady(rctx, o.readyURL, 20*time.Millisecond, p.Exited())
	if err != nil {
		s.stopQuietly(o)
		s.tmpLog = false // keep the log for inspection
		return nil, fmt.Errorf("%w\nserver output (%s), last lines:\n%s", err, s.logPath, bench.Tail(s.logPath, 4096))
	}
	secs := readyAt.Sub(p.Started()).Seconds()
	logf("server (pid %d) ready after %.3fs", p.PID(), secs)
	rep.Add("start_to_ready_s", "server start-to-ready", secs, bench.UnitSeconds)
	rep.Info("server_pid", "server pid", strconv.Itoa(p.PID()))

	// The admin kubeconfig may be written around readiness; wait for it.
	kctx, kcancel := context.WithTimeout(ctx, 60*time.Second)
	defer kcancel()
	err = bench.WaitForFile(kctx, o.kubeconfig, 50*time.Millisecond, func(path string) error {
		_, err := kubebench.LoadTarget(path, o.context, o.reqTime)
		return err
	})
	if err != nil {
		s.stopQuietly(o)
		s.tmpLog = false
		return nil, fmt.Errorf("kubeconfig after readiness: %w", err)
	}
	return s, nil
}

func (s *server) stopQuietly(o *options) {
	_ = s.Process.Stop(o.stopTimeout)
	s.logFile.Close()
}

// stop terminates the server with SIGTERM (SIGKILL after --stop-timeout)
// and removes a temporary log file unless errors were recorded. The exit
// status after SIGTERM is not judged: kcp and Meshplane differ there.
func (s *server) stop(o *options, rep *bench.Report, logf func(string, ...any)) {
	logf("stopping server (pid %d) with SIGTERM", s.PID())
	t0 := time.Now()
	if err := s.Process.Stop(o.stopTimeout); err != nil {
		rep.Error(fmt.Errorf("server: %w", err))
	} else {
		rep.Add("server_stop_s", "server stop after SIGTERM", time.Since(t0).Seconds(), bench.UnitSeconds)
	}
	s.logFile.Close()
	if s.tmpLog && !rep.HasErrors() {
		_ = os.Remove(s.logPath)
	} else {
		logf("server output kept in %s", s.logPath)
	}
}
