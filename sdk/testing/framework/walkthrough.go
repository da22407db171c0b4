package framework

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// ShellBlocks returns the ```sh fenced blocks of a Markdown file, in order
// (other fences, ```console or ```text, are not commands to run).
func ShellBlocks(markdown string) []string {
	var blocks []string
	var cur *strings.Builder
	sc := bufio.NewScanner(strings.NewReader(markdown))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		switch {
		case cur == nil && (trimmed == "```sh" || trimmed == "```bash"):
			cur = &strings.Builder{}
		case cur != nil && trimmed == "```":
			blocks = append(blocks, cur.String())
			cur = nil
		case cur != nil:
			cur.WriteString(line + "\n")
		}
	}
	return blocks
}

// RunWalkthrough runs the ```sh blocks of the Markdown file path as one bash
// script (set -euo pipefail, commands echoed), in dir, with env added to
// this process's environment, within timeout. It returns the combined
// output; the test fails, showing it, if the script fails.
func RunWalkthrough(t testing.TB, path, dir string, env []string, timeout time.Duration) string {
	t.Helper()
	md, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	blocks := ShellBlocks(string(md))
	if len(blocks) == 0 {
		t.Fatalf("%s has no ```sh blocks", path)
	}
	script := "set -euo pipefail\nset -x\n" + strings.Join(blocks, "")
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	cmd.WaitDelay = 10 * time.Second
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("walk-through %s failed: %v\n%s", path, err, out)
	}
	return string(out)
}
