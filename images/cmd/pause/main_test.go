package main_test

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/meshplane/meshplane/images/internal/testbinary"
)

var pause string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "meshplane-pause-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if pause, err = testbinary.BuildPause(dir); err != nil {
		os.RemoveAll(dir)
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// started runs pause and waits for its "pause: ready" line: its signal
// handlers are in place, so a signal sent next is handled.
func started(t *testing.T, attr *syscall.SysProcAttr) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(pause)
	cmd.SysProcAttr = attr
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(stderr).ReadString('\n')
	if line != "pause: ready\n" {
		t.Fatalf("pause wrote %q (%v), want \"pause: ready\"", line, err)
	}
	return cmd
}

func TestExitsOnSignal(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			cmd := started(t, nil)
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			if err := cmd.Wait(); err != nil {
				t.Fatalf("pause after %s: %v, want exit status 0", sig, err)
			}
		})
	}
}

// TestReapsAsPID1 runs pause as PID 1 of a new PID namespace, starts a shell
// in that namespace that backgrounds a sleep and exits: the sleep is
// reparented to pause, and once it exits pause must reap it (an unreaped
// child stays a zombie in /proc).
func TestReapsAsPID1(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to create a PID namespace")
	}
	nsenter, err := exec.LookPath("nsenter")
	if err != nil {
		t.Skip("needs nsenter (util-linux) to start a process in pause's PID namespace")
	}
	cmd := started(t, &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWPID})
	ppid := cmd.Process.Pid

	// No pipes: the backgrounded sleep would hold them open.
	if err := exec.Command(nsenter, "--target", strconv.Itoa(ppid), "--pid", "--",
		"/bin/sh", "-c", "sleep 2 & exit 0").Run(); err != nil {
		t.Fatalf("nsenter: %v", err)
	}
	var orphan int
	waitFor(t, "the orphaned sleep to be reparented to pause", func() bool {
		orphan = childOf(ppid)
		return orphan != 0
	})
	gone := poll(func() bool {
		_, err := procState(orphan)
		return errors.Is(err, os.ErrNotExist)
	})
	if !gone {
		state, _ := procState(orphan)
		t.Fatalf("pause's child %d was not reaped: its state is %q (Z: a zombie)", orphan, state)
	}
}

// waitFor polls cond until it holds; the deadline only bounds a wait for
// something that must happen, it asserts no duration.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	if !poll(cond) {
		t.Fatalf("gave up waiting for %s", what)
	}
}

// poll reports whether cond came to hold within 30 seconds.
func poll(cond func() bool) bool {
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
	return true
}

func status(pid int) (map[string]string, error) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		return nil, err
	}
	fields := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok {
			fields[k] = strings.TrimSpace(v)
		}
	}
	return fields, nil
}

func procState(pid int) (string, error) {
	s, err := status(pid)
	if err != nil {
		return "", err
	}
	return strings.Fields(s["State"] + " ")[0], nil
}

// childOf returns a process whose parent is ppid, 0 if none.
func childOf(ppid int) int {
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if s, err := status(pid); err == nil && s["PPid"] == strconv.Itoa(ppid) {
			return pid
		}
	}
	return 0
}
