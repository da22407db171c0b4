package main

import (
	"path/filepath"
	"testing"
)

// Bad arguments exit 2 before any cluster is contacted; a missing kube
// context exits 1 with the reason.
func TestHelmCommandExitCodes(t *testing.T) {
	empty := filepath.Join(t.TempDir(), "kubeconfig")
	for _, tc := range []struct {
		name string
		args []string
		want int
	}{
		{"install", []string{"--set", "novalue"}, 2},
		{"install", []string{"--values", "/nonexistent.yaml"}, 2},
		{"install", []string{"--no-such-flag"}, 2},
		{"install", []string{"extra"}, 2},
		{"uninstall", []string{"--timeout", "0s"}, 2},
		{"uninstall", []string{"--kubeconfig", empty, "--context", "nowhere"}, 1},
	} {
		if got := helmCommand(tc.name, tc.args); got != tc.want {
			t.Errorf("meshplane-platform %s %v: exit %d, want %d", tc.name, tc.args, got, tc.want)
		}
	}
}
