// Package testbinary builds the pause program as a static binary: the small
// real binary the image tests package and run.
package testbinary

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
)

// BuildPause builds images/cmd/pause with CGO_ENABLED=0 into dir and returns
// the binary's path.
func BuildPause(dir string) (string, error) {
	_, file, _, _ := runtime.Caller(0)
	path := filepath.Join(dir, "pause")
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", path, "./cmd/pause")
	cmd.Dir = filepath.Join(filepath.Dir(file), "..", "..")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building the pause program: %v\n%s", err, out)
	}
	return path, nil
}
