package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRunExitCodes(t *testing.T) {
	crd, err := os.ReadFile(filepath.Join("..", "..", "pkg", "apigen", "testdata", "gizmos.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	in := t.TempDir()
	if err := os.WriteFile(filepath.Join(in, "crds.yaml"), crd, 0o644); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte("kind: [\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out")

	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantStdout string
		wantStderr string
	}{
		{"no arguments", nil, 2, "", "no input"},
		{"unknown flag", []string{"--bogus"}, 2, "", "unknown flag"},
		{"help", []string{"--help"}, 0, "", "Usage:"},
		{"both inputs", []string{"--input-dir", in, bad}, 2, "", "not both"},
		{"invalid YAML", []string{bad}, 1, "", "invalid YAML"},
		{"stdout", []string{"--input-dir", in}, 0, "kind: APIExport", ""},
		{"stdout dash", []string{"--output-dir", "-", filepath.Join(in, "crds.yaml")}, 0, "kind: APIResourceSchema", ""},
		{"output dir", []string{"--input-dir=" + in, "--output-dir=" + out}, 0, "", "wrote " + filepath.Join(out, "apiexport-example.com.yaml")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(tt.args, strings.NewReader(""), &stdout, &stderr)
			if code != tt.wantCode {
				t.Errorf("exit code %d, want %d; stderr:\n%s", code, tt.wantCode, stderr.String())
			}
			if !strings.Contains(stdout.String(), tt.wantStdout) || (tt.wantStdout == "" && stdout.Len() != 0) {
				t.Errorf("stdout = %q, want it to contain %q", stdout.String(), tt.wantStdout)
			}
			if !strings.Contains(stderr.String(), tt.wantStderr) {
				t.Errorf("stderr = %q, want it to contain %q", stderr.String(), tt.wantStderr)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(out, "apiresourceschema-gizmos.example.com.yaml")); err != nil {
		t.Error(err)
	}
}
