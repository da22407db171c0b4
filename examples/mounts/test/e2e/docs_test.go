package e2e

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/meshplane/meshplane/sdk/process"
	"github.com/meshplane/meshplane/sdk/testing/framework"
)

var shBlock = regexp.MustCompile("(?s)```sh\n(.*?)```")

// TestDocsWalkThrough runs the commands of docs/mounts.md as a user
// would paste them in the repository root: two Meshplane servers, the
// example controller and proxy, a KubeCluster and a mounted workspace.
func TestDocsWalkThrough(t *testing.T) {
	framework.SkipIfExternal(t, "the walk-through starts servers of its own")
	repo, err := framework.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(filepath.Join(repo, "docs", "mounts.md"))
	if err != nil {
		t.Fatal(err)
	}
	var blocks []string
	for _, m := range shBlock.FindAllStringSubmatch(string(doc), -1) {
		blocks = append(blocks, m[1])
	}
	if len(blocks) < 5 {
		t.Fatalf("docs/mounts.md has %d sh blocks, want the whole walk-through", len(blocks))
	}

	// A directory that looks like the repository root: bin/ with the
	// binaries, examples/ for the CRD.
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	meshplane, err := framework.MeshplaneBinary()
	if err != nil {
		t.Fatal(err)
	}
	for name, path := range map[string]string{"meshplane": meshplane, "kubecluster-mounts": mountsBinary(t)} {
		if err := os.Symlink(path, filepath.Join(dir, "bin", name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(repo, "examples"), filepath.Join(dir, "examples")); err != nil {
		t.Fatal(err)
	}

	var out bytes.Buffer
	cmd := exec.Command("bash", "-ex", "-c", strings.Join(blocks, "\n"))
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "KUBECONFIG=", fmt.Sprintf("PORT_BASE=%d", freeBase(t, 7)))
	cmd.Stdout, cmd.Stderr = &out, &out
	p, err := process.StartProcess(cmd)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.Exited():
	case <-time.After(5 * time.Minute):
		_ = p.Kill()
		<-p.Exited()
		t.Fatalf("the walk-through did not finish in 5 minutes:\n%s", out.String())
	}
	t.Logf("docs/mounts.md:\n%s", out.String())
	if err := p.ExitErr(); err != nil {
		t.Fatalf("the commands of docs/mounts.md failed: %v", err)
	}
	for _, want := range []string{
		"kubecluster.mounts.examples.meshplane.io/b condition met", // Ready
		"workspace.tenancy.kcp.io/b condition met",                 // Ready, then Unavailable
		"hello-from-b", // B's configmap through the mount
		"\nhi\n",
		"Mount is not reporting ready", // the condition's message
		"is a mount that is not ready", // the 503
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("docs/mounts.md: the output lacks %q", want)
		}
	}
}

// freeBase returns a port p such that p..p+n-1 are free on 127.0.0.1.
func freeBase(t *testing.T, n int) int {
	t.Helper()
	for try := 0; try < 100; try++ {
		ports, err := process.FreePorts(1)
		if err != nil {
			t.Fatal(err)
		}
		base, ok := ports[0], true
		for i := 0; i < n && ok; i++ {
			ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", base+i))
			if err != nil {
				ok = false
				continue
			}
			_ = ln.Close()
		}
		if ok {
			return base
		}
	}
	t.Fatalf("no %d consecutive free ports found", n)
	return 0
}
