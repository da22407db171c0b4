package bench

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
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

func TestTail(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log")
	if err := os.WriteFile(path, []byte("first line\nlast line\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := Tail(path, 10); got != "last line\n" {
		t.Fatalf("Tail(10) = %q, want the last 10 bytes %q", got, "last line\n")
	}
	if got := Tail(path, 1000); got != "first line\nlast line\n" {
		t.Fatalf("Tail(1000) = %q, want the whole file", got)
	}
	if got := Tail(filepath.Join(t.TempDir(), "missing"), 10); got != "" {
		t.Fatalf("Tail of a missing file = %q, want empty", got)
	}
}
