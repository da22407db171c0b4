// Package containerd_test loads the builder's archives into a real containerd
// (the runtime of the test cluster's node) and runs them.
package containerd_test

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/meshplane/meshplane/images/builder"
	"github.com/meshplane/meshplane/images/internal/testbinary"
)

// containerd is one containerd process with its root, state and socket in a
// temp dir.
type containerd struct {
	t       *testing.T
	dir     string
	address string
}

func startContainerd(t *testing.T) *containerd {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to run containerd")
	}
	for _, bin := range []string{"containerd", "ctr", "runc"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Skipf("%s is not installed (scripts/install-test-deps.sh installs Debian's containerd and runc): skipping the import test", bin)
		}
	}
	dir := t.TempDir()
	c := &containerd{t: t, dir: dir, address: filepath.Join(dir, "containerd.sock")}
	config := fmt.Sprintf(`version = 2
root = %q
state = %q
disabled_plugins = ["io.containerd.grpc.v1.cri"]
[grpc]
  address = %q
[ttrpc]
  address = %q
`, filepath.Join(dir, "root"), filepath.Join(dir, "state"), c.address, c.address+".ttrpc")
	configPath := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(configPath, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	log, err := os.Create(filepath.Join(dir, "containerd.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("containerd", "--config", configPath)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		<-exited
		log.Close()
		if t.Failed() {
			b, _ := os.ReadFile(log.Name())
			t.Logf("containerd log:\n%s", b)
		}
	})
	deadline := time.Now().Add(60 * time.Second)
	for {
		if _, err := c.ctrOutput("version"); err == nil {
			return c
		}
		select {
		case err := <-exited:
			b, _ := os.ReadFile(log.Name())
			t.Fatalf("containerd exited: %v\n%s", err, b)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("containerd did not answer on its socket")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (c *containerd) ctrCommand(args ...string) *exec.Cmd {
	return exec.Command("ctr", append([]string{"--address", c.address, "-n", "k8s.io"}, args...)...)
}

func (c *containerd) ctrOutput(args ...string) (string, error) {
	out, err := c.ctrCommand(args...).CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("ctr %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out), nil
}

func (c *containerd) ctr(args ...string) string {
	c.t.Helper()
	out, err := c.ctrOutput(args...)
	if err != nil {
		c.t.Fatal(err)
	}
	return out
}

// run starts `ctr run` of ref as container id, waits for the pause
// program's "pause: ready" line, and returns the task's host PID and a
// function returning ctr's exit (the task's exit status).
func (c *containerd) run(ref, id string) (int, func() error) {
	c.t.Helper()
	cmd := c.ctrCommand("run", "--rm", ref, id)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		c.t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		c.t.Fatal(err)
	}
	var exitErr error
	done := make(chan struct{})
	first := make(chan string, 1)
	go func() {
		r := bufio.NewReader(stderr)
		line, _ := r.ReadString('\n')
		first <- line
		io.Copy(io.Discard, r)
		exitErr = cmd.Wait()
		close(done)
	}()
	wait := func() error { <-done; return exitErr }
	c.t.Cleanup(func() {
		c.ctrOutput("task", "kill", "-s", "SIGKILL", id)
		wait()
		c.ctrOutput("task", "delete", id)
		c.ctrOutput("containers", "delete", id)
	})
	if line := <-first; line != "pause: ready\n" {
		c.t.Fatalf("ctr run %s: the container wrote %q (exit: %v), want \"pause: ready\"", ref, line, wait())
	}
	out := c.ctr("task", "ls")
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) == 3 && f[0] == id && f[2] == "RUNNING" {
			pid, err := strconv.Atoi(f[1])
			if err != nil {
				c.t.Fatalf("task ls: %q", l)
			}
			return pid, wait
		}
	}
	c.t.Fatalf("task %s is not running:\n%s", id, out)
	return 0, nil
}

func writeArchives(t *testing.T) map[string]*builder.Image {
	t.Helper()
	dir := t.TempDir()
	pause, err := testbinary.BuildPause(dir)
	if err != nil {
		t.Fatal(err)
	}
	binary, err := os.ReadFile(pause)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := os.ReadFile("/etc/ssl/certs/ca-certificates.crt")
	if err != nil {
		ca = []byte("# no CA bundle on the build host\n")
	}
	b, err := builder.New(builder.Options{
		Registry: "ghcr.io/meshplane", Version: "0.0.0-test", Source: "test", Revision: "test",
		Created: time.Unix(0, 0), CACertificates: ca,
	})
	if err != nil {
		t.Fatal(err)
	}
	images := map[string]*builder.Image{}
	// pause as the sandbox image (bare) and the same binary on the server
	// base, the shape of every other image.
	for _, spec := range []struct {
		name string
		bare bool
	}{{"pause", true}, {"server", false}} {
		img, err := b.Build(spec.name, binary, spec.bare)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := builder.WriteArchiveFile(filepath.Join(dir, spec.name+".tar"), img); err != nil {
			t.Fatal(err)
		}
		images[filepath.Join(dir, spec.name+".tar")] = img
	}
	return images
}

func TestImportAndRun(t *testing.T) {
	c := startContainerd(t)
	archives := writeArchives(t)

	for path, img := range archives {
		c.ctr("images", "import", path)
		digest, err := img.Image.Digest()
		if err != nil {
			t.Fatal(err)
		}
		list := c.ctr("images", "ls")
		found := false
		for _, line := range strings.Split(list, "\n") {
			f := strings.Fields(line)
			if len(f) > 2 && f[0] == img.Ref {
				found = true
				if f[2] != digest.String() {
					t.Errorf("%s imported with digest %s, the builder printed %s", img.Ref, f[2], digest)
				}
			}
		}
		if !found {
			t.Fatalf("%s not in the k8s.io namespace after import:\n%s", img.Ref, list)
		}
	}

	for _, img := range archives {
		t.Run(img.Name, func(t *testing.T) {
			c := *c
			c.t = t
			pid, wait := c.run(img.Ref, "test-"+img.Name)
			uid, err := procUID(pid)
			if err != nil {
				t.Fatal(err)
			}
			if uid != "65532" {
				t.Errorf("%s runs as uid %s, want 65532", img.Ref, uid)
			}
			c.ctr("task", "kill", "-s", "SIGTERM", "test-"+img.Name)
			if err := wait(); err != nil {
				t.Errorf("%s after SIGTERM: ctr run returned %v, want exit status 0", img.Ref, err)
			}
		})
	}
}

func procUID(pid int) (string, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "Uid:"); ok {
			return strings.Fields(rest)[0], nil
		}
	}
	return "", fmt.Errorf("no Uid in /proc/%d/status", pid)
}
