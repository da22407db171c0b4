package launcher

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is the log stream's writer in tests.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestSupervise: a component whose process keeps exiting is started
// again each time, after a backoff that doubles, with one log line per
// restart and the count in status.json; once the context ends nothing is
// started again. Real processes (/bin/sh).
func TestSupervise(t *testing.T) {
	root := t.TempDir()
	out := &syncBuffer{}
	logs := &logStream{out: out, pad: 8}
	c := &Config{RootDir: root, BinDir: "/bin", ReadyTimeout: 10 * time.Second, logf: logs.printf}
	comp := Component{Name: "flaky", Binary: "sh", Args: []string{"-c", "sleep 0.2; exit 3"},
		Ready: func(context.Context) error { return nil }}
	restarted := make(chan struct{}, 100)
	comp.AfterRestart = func(context.Context) error {
		restarted <- struct{}{}
		return nil
	}
	status := newStatusWriter(c.StatusFile(), []Component{comp})
	p, err := c.launch(logs, comp)
	if err != nil {
		t.Fatal(err)
	}
	s := &supervised{comp: comp, cur: p}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); c.supervise(ctx, logs, status, s) }()
	for i := range 2 { // the first restart waits 1 s, the second 2 s
		select {
		case <-restarted:
		case <-time.After(30 * time.Second):
			cancel()
			<-done
			t.Fatalf("restart %d did not happen within 30s; log:\n%s", i+1, out.String())
		}
	}
	cancel()
	<-done

	for _, want := range []string{
		"flaky (pid ", "exited (exit status 3): restart 1 in 1s",
		"exited (exit status 3): restart 2 in 2s",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, out.String())
		}
	}
	if n := strings.Count(out.String(), "| starting flaky"); n != 0 {
		t.Errorf("%d \"starting\" lines besides the restart lines", n)
	}
	st, err := ReadStatus(root)
	if err != nil {
		t.Fatal(err)
	}
	cs, _ := st.Find("flaky")
	if cs.Restarts < 2 || cs.LastExit != "exit status 3" || cs.PID == p.proc.PID() {
		t.Errorf("status after two restarts: %+v", cs)
	}
	// After the context ended the last process is left to the caller
	// (Run stops it) and nothing more is started.
	last := s.current()
	<-last.proc.Exited()
	time.Sleep(1500 * time.Millisecond)
	if s.current() != last {
		t.Error("a process was started after the context ended")
	}
}

// TestPrintStatus: the status command's table and its answer for a
// stopped platform and a missing one.
func TestPrintStatus(t *testing.T) {
	root := t.TempDir()
	var out bytes.Buffer
	if err := PrintStatus(root, &out); !errors.Is(err, ErrNotRunning) {
		t.Errorf("no status file: %v, want ErrNotRunning", err)
	}
	w := newStatusWriter(filepath.Join(root, StatusFileName), []Component{{Name: "core"}, {Name: "openfga"}})
	for _, name := range []string{"core", "openfga"} {
		if err := w.update(name, func(cs *ComponentStatus) { cs.State, cs.PID = StateRunning, os.Getpid() }); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.update("openfga", func(cs *ComponentStatus) { cs.Restarts, cs.LastExit = 2, "signal: killed" }); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if err := PrintStatus(root, &out); err != nil {
		t.Errorf("all running: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "openfga") || !strings.Contains(out.String(), "signal: killed") {
		t.Errorf("table:\n%s", out.String())
	}
	if err := w.stopped(); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if err := PrintStatus(root, &out); !errors.Is(err, ErrNotRunning) || !strings.Contains(out.String(), "stopped") {
		t.Errorf("stopped: %v\n%s", err, out.String())
	}
}

// TestSuperviseFailedStart: when the component cannot be started again
// (its binary is gone) the backoff still doubles, even though the last
// process that did run ran longer than the reset age.
func TestSuperviseFailedStart(t *testing.T) {
	old := restartBackoff
	restartBackoff = backoffPolicy{min: 100 * time.Millisecond, max: time.Second, reset: 300 * time.Millisecond}
	t.Cleanup(func() { restartBackoff = old })
	root, binDir := t.TempDir(), t.TempDir()
	if err := os.Symlink("/bin/sh", filepath.Join(binDir, "sh")); err != nil {
		t.Fatal(err)
	}
	out := &syncBuffer{}
	logs := &logStream{out: out, pad: 8}
	c := &Config{RootDir: root, BinDir: binDir, ReadyTimeout: 10 * time.Second, logf: logs.printf}
	comp := Component{Name: "gone", Binary: "sh", Args: []string{"-c", "sleep 0.5"}, Ready: func(context.Context) error { return nil }}
	p, err := c.launch(logs, comp)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(binDir, "sh")); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.supervise(ctx, logs, newStatusWriter(c.StatusFile(), []Component{comp}), &supervised{comp: comp, cur: p})
	}()
	want := []string{"restart 1 in 100ms", "restart 2 in 200ms", "restart 3 in 400ms", "restart 4 in 800ms", "restart 5 in 1s"}
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(out.String(), want[len(want)-1]) && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	cancel()
	<-done
	for _, w := range want {
		if !strings.Contains(out.String(), w) {
			t.Errorf("log lacks %q:\n%s", w, out.String())
		}
	}
	if !strings.Contains(out.String(), "not found") {
		t.Errorf("the failed start is not logged:\n%s", out.String())
	}
}
