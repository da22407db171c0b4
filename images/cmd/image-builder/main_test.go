package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/meshplane/meshplane/images/internal/testbinary"
)

func TestRunWritesArchivesAndPrintsDigests(t *testing.T) {
	dir := t.TempDir()
	pause, err := testbinary.BuildPause(dir)
	if err != nil {
		t.Fatal(err)
	}
	server := filepath.Join(dir, "server")
	if err := os.Link(pause, server); err != nil {
		t.Fatal(err)
	}
	ca := filepath.Join(dir, "ca.crt")
	if err := os.WriteFile(ca, []byte("test bundle\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	version := filepath.Join(dir, "VERSION")
	if err := os.WriteFile(version, []byte("2.0.0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "images")
	args := []string{"--registry", "registry.test/mp/", "--version-file", version, "--ca-certificates", ca,
		"--out", out, pause, server}

	var first, second bytes.Buffer
	if err := run(args, &first); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(first.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("want one line per image, got:\n%s", first.String())
	}
	for i, name := range []string{"pause", "server"} {
		f := strings.Fields(lines[i])
		if f[0] != "registry.test/mp/"+name+":2.0.0" || !strings.HasPrefix(f[1], "sha256:") {
			t.Errorf("line %q: want reference registry.test/mp/%s:2.0.0 and a digest", lines[i], name)
		}
		if _, err := os.Stat(filepath.Join(out, name+".tar")); err != nil {
			t.Errorf("archive of %s: %v", name, err)
		}
	}
	if err := run(args, &second); err != nil {
		t.Fatal(err)
	}
	if first.String() != second.String() {
		t.Errorf("a second run printed other digests:\n%s\nthen\n%s", first.String(), second.String())
	}
	if err := run([]string{"--version", "1.0.0", "--ca-certificates", ca, "--out", out}, &first); err == nil {
		t.Error("no binaries given: want an error")
	}
}
