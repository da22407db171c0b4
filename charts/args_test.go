package charts

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// binaryOf is the binary an image runs: the image's repository (its
// entrypoint is the binary of the same name).
func binaryOf(image string) string {
	ref := image
	if i := strings.Index(ref, "@"); i >= 0 {
		ref = ref[:i]
	}
	if i := strings.LastIndex(ref, ":"); i > strings.LastIndex(ref, "/") {
		ref = ref[:i]
	}
	return ref[strings.LastIndex(ref, "/")+1:]
}

// binaryPath finds a binary as the test framework does: $<NAME>_BIN, else
// bin/<name> of the repository.
func binaryPath(t testing.TB, name string) string {
	t.Helper()
	env := strings.ToUpper(strings.ReplaceAll(name, "-", "_")) + "_BIN"
	if p := os.Getenv(env); p != "" {
		return p
	}
	p := filepath.Join(repoRoot(t), "bin", name)
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("%s not found: build it (make build) or set %s", p, env)
	}
	return p
}

// checkArgs runs bin with a container's command and args and --help last:
// cobra and Go's flag package parse every flag before they honour --help,
// so an unknown flag or a bad value makes it fail instead of printing the
// usage and exiting 0. A binary that starts for real (a positional
// argument ended flag parsing) is stopped after the timeout: a failure too.
func checkArgs(bin string, c corev1.Container) error {
	args := append(append(append([]string{}, c.Command...), c.Args...), "--help")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	// No inherited configuration: the container's own environment only.
	cmd.Env = []string{"HOME=" + os.TempDir(), "PATH=/usr/bin:/bin"}
	for _, e := range c.Env {
		if e.ValueFrom == nil {
			cmd.Env = append(cmd.Env, e.Name+"="+e.Value)
		}
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if ctx.Err() != nil {
		return fmt.Errorf("%s %s did not exit on --help (an argument is not a flag?)", bin, strings.Join(args, " "))
	}
	if err != nil {
		return fmt.Errorf("%s %s: %v: %s", filepath.Base(bin), strings.Join(args, " "), err, firstLines(out.String(), 5))
	}
	// Exit 0 must come from --help, not from a run that ended by itself.
	if !strings.Contains(strings.ToLower(out.String()), "usage") {
		return fmt.Errorf("%s %s: exit 0 without a usage text: %s", filepath.Base(bin), strings.Join(args, " "), firstLines(out.String(), 5))
	}
	return nil
}

func firstLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, "\n")
}

// checkAllArgs checks every container and init container of every
// workload in objs.
func checkAllArgs(t testing.TB, objs []object) []error {
	t.Helper()
	var errs []error
	for name, spec := range podSpecs(objs) {
		for _, c := range append(append([]corev1.Container{}, spec.InitContainers...), spec.Containers...) {
			if err := checkArgs(binaryPath(t, binaryOf(c.Image)), c); err != nil {
				errs = append(errs, fmt.Errorf("%s container %s: %w", name, c.Name, err))
			}
		}
	}
	return errs
}
