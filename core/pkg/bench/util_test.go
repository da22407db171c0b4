package bench

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestBaseServerURL(t *testing.T) {
	cases := map[string]string{
		"https://127.0.0.1:6443":                     "https://127.0.0.1:6443",
		"https://127.0.0.1:6443/":                    "https://127.0.0.1:6443",
		"https://127.0.0.1:6443/clusters/root":       "https://127.0.0.1:6443",
		"https://127.0.0.1:6443/clusters/root:org":   "https://127.0.0.1:6443",
		"https://h:1/prefix/clusters/root/extra":     "https://h:1/prefix",
		"https://h:1/prefix":                         "https://h:1/prefix",
		"https://h:1/clustersx":                      "https://h:1/clustersx",
		"https://127.0.0.1:6443/clusters/root?x=1#f": "https://127.0.0.1:6443",
	}
	for in, want := range cases {
		got, err := BaseServerURL(in)
		if err != nil || got != want {
			t.Errorf("BaseServerURL(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "127.0.0.1:6443", "://x", "/clusters/root"} {
		if _, err := BaseServerURL(bad); err == nil {
			t.Errorf("BaseServerURL(%q) should fail", bad)
		}
	}
	if got := ClusterURL("https://h:1/", "bench-lc-3"); got != "https://h:1/clusters/bench-lc-3" {
		t.Errorf("ClusterURL = %q", got)
	}
}

func TestValidateClusterName(t *testing.T) {
	for _, ok := range []string{"root", "bench-abc123", "root:org:team", "a", "bench-lc-999"} {
		if err := ValidateClusterName(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "Root", "-a", "a-", "root:", ":root", "a/b", "a b", strings.Repeat("a", 64)} {
		if err := ValidateClusterName(bad); err == nil {
			t.Errorf("%q should be invalid", bad)
		}
	}
}

func TestRandomSuffix(t *testing.T) {
	re := regexp.MustCompile(`^[a-z0-9]{8}$`)
	a, b := RandomSuffix(8), RandomSuffix(8)
	if !re.MatchString(a) || !re.MatchString(b) || a == b {
		t.Fatalf("bad suffixes %q %q", a, b)
	}
}

func TestReportMarkdownAndJSON(t *testing.T) {
	r := NewReport()
	r.Info("server", "server", "https://h|x")
	r.Add("c_per_s", "creates/s", 1234.4, UnitPerSecond)
	r.Add("p50", "p50", 1.234, UnitMillis)
	r.Add("rss", "rss", 100.25, UnitMiB)
	r.Error(nil)
	var md bytes.Buffer
	if err := r.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	want := "| figure | value |\n|---|---|\n| server | https://h\\|x |\n| creates/s | 1234/s |\n| p50 | 1.23 ms |\n| rss | 100.2 MiB |\n"
	if md.String() != want {
		t.Fatalf("markdown:\n%s\nwant:\n%s", md.String(), want)
	}
	r.Error(os.ErrNotExist)
	if !r.HasErrors() {
		t.Fatal("HasErrors false")
	}
	var js bytes.Buffer
	if err := r.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(js.String(), `"key": "c_per_s"`) || !strings.Contains(js.String(), "file does not exist") {
		t.Fatalf("json: %s", js.String())
	}
}

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
	if _, err := WaitReady(ctx, srv.URL+"/readyz", 5*time.Millisecond, nil); err != nil {
		t.Fatal(err)
	}
	if hits.Load() != 4 {
		t.Fatalf("expected 4 polls, got %d", hits.Load())
	}
	short, cancel2 := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel2()
	port, err := FreePort()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := WaitReady(short, "https://127.0.0.1:"+strconv.Itoa(port)+"/readyz", 5*time.Millisecond, nil); err == nil {
		t.Fatal("expected timeout")
	}
}

func TestStartAndStopServer(t *testing.T) {
	dir := t.TempDir()
	logPath := filepath.Join(dir, "log")
	f, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, err := StartServer(`sh -c 'echo started; trap "echo bye; exit 0" TERM; while :; do sleep 0.05; done'`, f)
	if err != nil {
		t.Fatal(err)
	}
	// exec replaces /bin/sh: the PID is the command itself.
	if _, err := ReadRSS(s.PID()); err != nil {
		t.Fatalf("ReadRSS(server): %v", err)
	}
	time.Sleep(200 * time.Millisecond)
	if err := s.Stop(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	select {
	case <-s.Exited():
	default:
		t.Fatal("not exited")
	}
	if out := Tail(logPath, 100); !strings.Contains(out, "started") || !strings.Contains(out, "bye") {
		t.Fatalf("log %q", out)
	}

	// A process that exits early is reported by WaitReady.
	s2, err := StartServer("true", f)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := WaitReady(ctx, "https://127.0.0.1:1/readyz", 5*time.Millisecond, s2.Exited()); err == nil || !strings.Contains(err.Error(), "exited") {
		t.Fatalf("expected exit error, got %v", err)
	}
}
