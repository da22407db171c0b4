package main

import (
	"bufio"
	"fmt"
	"net"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// TestCacheBoundsAsOpenFGAReadsThem starts the built openfga binary and
// reads the sizes from the configuration OpenFGA logs at start: the
// default bound when nothing sets them, a flag's or the environment's
// value when one does.
func TestCacheBoundsAsOpenFGAReadsThem(t *testing.T) {
	bin, err := framework.Binary("openfga", "operators", "./cmd/openfga")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name                string
		args, env           []string
		typesystems, models string
	}{
		{name: "default", typesystems: DefaultCacheSize, models: DefaultCacheSize},
		{name: "flag", args: []string{"--datastore-max-typesystem-cache-size", "7"}, typesystems: "7", models: DefaultCacheSize},
		{name: "environment", env: []string{"OPENFGA_DATASTORE_MAX_CACHE_SIZE=9"}, typesystems: DefaultCacheSize, models: "9"},
	} {
		t.Run(c.name, func(t *testing.T) {
			config := startupConfig(t, bin, c.args, c.env)
			for key, want := range map[string]string{"MaxTypesystemCacheSize": c.typesystems, "MaxCacheSize": c.models} {
				m := regexp.MustCompile(`"` + key + `":(\d+)`).FindStringSubmatch(config)
				if m == nil || m[1] != want {
					t.Errorf("%s = %v, want %s", key, m, want)
				}
			}
		})
	}
}

// startupConfig runs `openfga run` on the memory datastore and returns the
// line it logs when starting, which holds its whole configuration.
func startupConfig(t *testing.T, bin string, args, env []string) string {
	t.Helper()
	args = append([]string{"run", "--datastore-engine", "memory", "--playground-enabled=false", "--metrics-enabled=false",
		"--http-addr", freeAddr(t), "--grpc-addr", freeAddr(t)}, args...)
	cmd := exec.Command(bin, args...)
	cmd.Env = append(cmd.Environ(), env...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	lines := make(chan string)
	go func() {
		defer close(lines)
		s := bufio.NewScanner(out)
		s.Buffer(make([]byte, 1<<20), 1<<20)
		for s.Scan() {
			if strings.Contains(s.Text(), "starting openfga service") {
				lines <- s.Text()
				return
			}
		}
	}()
	select {
	case l, ok := <-lines:
		if !ok {
			t.Fatal("openfga exited without logging its configuration")
		}
		return l
	case <-time.After(time.Minute):
		t.Fatal("openfga logged no configuration within a minute")
	}
	return ""
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return fmt.Sprintf("127.0.0.1:%d", l.Addr().(*net.TCPAddr).Port)
}
