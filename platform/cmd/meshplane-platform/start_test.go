package main

import (
	"os/exec"
	"testing"
	"time"

	"github.com/meshplane/meshplane/sdk/process"
)

// startLogged starts cmd with its output captured, stops it when the test
// ends and then, if the test failed, logs the last lines lines of its
// output under name.
func startLogged(t *testing.T, name string, cmd *exec.Cmd, lines int) *process.Process {
	t.Helper()
	logs := &process.Buffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	p, err := process.StartProcess(cmd)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = p.Stop(30 * time.Second)
		if t.Failed() {
			t.Logf("%s log:\n%s", name, tail(logs.String(), lines))
		}
	})
	return p
}
