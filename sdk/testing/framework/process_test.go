package framework_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

func TestWaitReady(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if hits.Add(1) < 4 {
			http.Error(w, "not yet", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ok"))
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := framework.WaitReady(ctx, srv.URL+"/readyz", 5*time.Millisecond, nil); err != nil {
		t.Fatal(err)
	}
	if hits.Load() != 4 {
		t.Fatalf("expected 4 polls, got %d", hits.Load())
	}
	short, cancel2 := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel2()
	ports, err := framework.FreePorts(1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := framework.WaitReady(short, "https://127.0.0.1:"+strconv.Itoa(ports[0])+"/readyz", 5*time.Millisecond, nil); err == nil {
		t.Fatal("expected timeout")
	}
}

func TestStartShellAndStop(t *testing.T) {
	dir := t.TempDir()
	logPath := filepath.Join(dir, "log")
	f, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := framework.StartShell(`sh -c 'echo started; trap "echo bye; exit 0" TERM; while :; do sleep 0.05; done'`, f)
	if err != nil {
		t.Fatal(err)
	}
	// exec replaces /bin/sh: the PID is the command itself (on Linux, seen
	// in /proc once the exec is done).
	if _, err := os.Stat("/proc/self/cmdline"); err == nil {
		var comm []byte
		framework.Eventually(t, 5*time.Second, 20*time.Millisecond, "the started pid to run the command", func() (bool, string) {
			comm, _ = os.ReadFile("/proc/" + strconv.Itoa(p.PID()) + "/cmdline")
			return strings.Contains(string(comm), "trap"), fmt.Sprintf("pid %d runs %q", p.PID(), comm)
		})
	}
	time.Sleep(200 * time.Millisecond)
	if err := p.Stop(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.Exited():
	default:
		t.Fatal("not exited")
	}
	if p.ExitErr() != nil {
		t.Fatalf("exit status after SIGTERM: %v", p.ExitErr())
	}
	out, _ := os.ReadFile(logPath)
	if !strings.Contains(string(out), "started") || !strings.Contains(string(out), "bye") {
		t.Fatalf("log %q", out)
	}

	// A process that exits early is reported by WaitReady.
	p2, err := framework.StartShell("true", f)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := framework.WaitReady(ctx, "https://127.0.0.1:1/readyz", 5*time.Millisecond, p2.Exited()); err == nil || !strings.Contains(err.Error(), "exited") {
		t.Fatalf("expected exit error, got %v", err)
	}
}
