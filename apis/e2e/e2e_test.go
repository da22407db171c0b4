// Package e2e installs the core.platform-mesh.io API into a real Meshplane
// server with the real kubectl: the CRDs into a workspace, and the
// APIResourceSchemas and APIExport into a provider workspace bound by a
// consumer. It needs MESHPLANE_BIN (set by `make test`) and kubectl on PATH,
// and is skipped without them.
package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/meshplane/meshplane/apis/config"
)

type server struct {
	rootDir, base, kubeconfig, cacheDir string
}

// kubectl runs kubectl against the workspace at path (e.g. root:orgs).
func (s *server) kubectl(path, stdin string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	all := append([]string{"--kubeconfig", s.kubeconfig, "--context", "root", "--cache-dir", s.cacheDir,
		"--server", s.base + "/clusters/" + path}, args...)
	cmd := exec.CommandContext(ctx, "kubectl", all...)
	cmd.Stdin = strings.NewReader(stdin)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

func (s *server) mustKubectl(t *testing.T, path, stdin string, args ...string) string {
	t.Helper()
	out, err := s.kubectl(path, stdin, args...)
	if err != nil {
		t.Fatalf("kubectl %s (in %s): %v\n%s", strings.Join(args, " "), path, err, out)
	}
	return out
}

func startServer(t *testing.T) *server {
	t.Helper()
	bin := os.Getenv("MESHPLANE_BIN")
	if bin == "" {
		t.Skip("MESHPLANE_BIN is not set (make test sets it)")
	}
	if _, err := os.Stat(bin); err != nil {
		t.Skipf("MESHPLANE_BIN: %v", err)
	}
	if _, err := exec.LookPath("kubectl"); err != nil {
		t.Skip("kubectl is not on PATH")
	}
	ports := freePorts(t, 3)
	s := &server{
		rootDir:  t.TempDir(),
		base:     "https://127.0.0.1:" + strconv.Itoa(ports[0]),
		cacheDir: t.TempDir(),
	}
	s.kubeconfig = filepath.Join(s.rootDir, "admin.kubeconfig")
	logPath := filepath.Join(s.rootDir, "meshplane.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "start",
		"--root-directory", s.rootDir,
		"--bind-address", "127.0.0.1",
		"--secure-port", strconv.Itoa(ports[0]),
		"--embedded-etcd-client-port", strconv.Itoa(ports[1]),
		"--embedded-etcd-peer-port", strconv.Itoa(ports[2]),
	)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
		logFile.Close()
		if t.Failed() {
			if log, err := os.ReadFile(logPath); err == nil {
				if len(log) > 8000 {
					log = log[len(log)-8000:]
				}
				t.Logf("end of the meshplane log:\n%s", log)
			}
		}
	})

	deadline := time.Now().Add(90 * time.Second)
	for {
		select {
		case err := <-exited:
			t.Fatalf("meshplane exited before it was ready: %v", err)
		default:
		}
		if _, err := os.Stat(s.kubeconfig); err == nil {
			if out, err := s.kubectl("root", "", "get", "--raw", "/readyz"); err == nil && strings.TrimSpace(out) == "ok" {
				return s
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("meshplane did not become ready within 90s")
		}
		time.Sleep(300 * time.Millisecond)
	}
}

func freePorts(t *testing.T, n int) []int {
	t.Helper()
	var ports []int
	for i := 0; i < n; i++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports
}

// writeEmbedded copies the embedded directory dir ("crd" or "kcp") to disk,
// so that kubectl applies exactly what operators get from package config.
func writeEmbedded(t *testing.T, dir string) string {
	t.Helper()
	out := t.TempDir()
	files, err := fs.Glob(config.FS, dir+"/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no embedded files in %s: %v", dir, err)
	}
	for _, f := range files {
		data, err := config.FS.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(out, filepath.Base(f)), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func createWorkspaces(t *testing.T, s *server, names ...string) {
	t.Helper()
	var docs []string
	for _, n := range names {
		docs = append(docs, fmt.Sprintf("apiVersion: tenancy.kcp.io/v1alpha1\nkind: Workspace\nmetadata: {name: %s}\n", n))
	}
	s.mustKubectl(t, "root", strings.Join(docs, "---\n"), "apply", "-f", "-")
	args := []string{"wait", "--for=jsonpath={.status.phase}=Ready", "--timeout=60s"}
	for _, n := range names {
		args = append(args, "workspace/"+n)
	}
	s.mustKubectl(t, "root", "", args...)
}

const validAccount = `apiVersion: core.platform-mesh.io/v1alpha1
kind: Account
metadata: {name: acme}
spec:
  type: org
  displayName: ACME Inc.
  creator: alice@example.com
  data: {costCenter: "1234", tags: [a, b]}
`

// checkAccounts creates a valid and two invalid Accounts in the workspace
// at path and checks what kubectl shows.
func checkAccounts(t *testing.T, s *server, path string) {
	t.Helper()
	s.mustKubectl(t, path, validAccount, "create", "-f", "-")
	table := s.mustKubectl(t, path, "", "get", "accounts")
	for _, want := range []string{"TYPE", "DISPLAY NAME", "READY", "acme", "org", "ACME Inc."} {
		if !strings.Contains(table, want) {
			t.Errorf("kubectl get accounts in %s: no %q in\n%s", path, want, table)
		}
	}
	data := s.mustKubectl(t, path, "", "get", "account", "acme", "-o", "jsonpath={.spec.data.tags[1]} {.spec.creator}")
	if data != "b alice@example.com" {
		t.Errorf("stored account: spec.data.tags[1] and spec.creator = %q", data)
	}

	invalid := []struct{ spec, want string }{
		{`{type: org, displayName: ` + strings.Repeat("x", 256) + `}`, "spec.displayName: Too long"},
		{`{type: folder, displayName: F}`, `spec.type: Unsupported value: "folder"`},
		{`{type: org}`, "spec.displayName: Required value"},
	}
	for _, tt := range invalid {
		out, err := s.kubectl(path, "apiVersion: core.platform-mesh.io/v1alpha1\nkind: Account\nmetadata: {name: bad}\nspec: "+tt.spec+"\n", "create", "-f", "-")
		if err == nil {
			t.Errorf("creating an Account with spec %.40s... in %s succeeded, want it rejected", tt.spec, path)
			continue
		}
		if !strings.Contains(out, tt.want) {
			t.Errorf("creating an Account with spec %.40s... in %s: error %q does not contain %q", tt.spec, path, out, tt.want)
		}
	}
}

func TestInstall(t *testing.T) {
	s := startServer(t)
	createWorkspaces(t, s, "crds", "provider", "consumer")

	t.Run("CRDs in a workspace", func(t *testing.T) {
		s.mustKubectl(t, "root:crds", "", "apply", "-f", writeEmbedded(t, "crd"))
		s.mustKubectl(t, "root:crds", "", "wait", "--for=condition=Established", "--timeout=60s", "crd", "--all")
		checkAccounts(t, s, "root:crds")
	})

	t.Run("APIExport bound by a consumer", func(t *testing.T) {
		s.mustKubectl(t, "root:provider", "", "apply", "-f", writeEmbedded(t, "kcp"))
		s.mustKubectl(t, "root:consumer", `apiVersion: apis.kcp.io/v1alpha2
kind: APIBinding
metadata: {name: core.platform-mesh.io}
spec:
  reference: {export: {path: root:provider, name: core.platform-mesh.io}}
`, "apply", "-f", "-")
		s.mustKubectl(t, "root:consumer", "", "wait", "--for=condition=Ready", "--timeout=60s", "apibinding/core.platform-mesh.io")
		bound := s.mustKubectl(t, "root:consumer", "", "get", "apibinding", "core.platform-mesh.io",
			"-o", "jsonpath={range .status.boundResources[*]}{.resource} {end}")
		if bound != "accountinfos accounts authorizationmodels stores " {
			t.Errorf("bound resources = %q", bound)
		}
		claims := s.mustKubectl(t, "root:consumer", "", "get", "apibinding", "core.platform-mesh.io",
			"-o", "jsonpath={range .status.exportPermissionClaims[*]}{.group}/{.resource} {end}")
		if claims != "/namespaces tenancy.kcp.io/workspaces tenancy.kcp.io/workspacetypes " {
			t.Errorf("export permission claims seen by the binding = %q", claims)
		}
		checkAccounts(t, s, "root:consumer")
		s.mustKubectl(t, "root:consumer", `apiVersion: core.platform-mesh.io/v1alpha1
kind: Store
metadata: {name: acme}
spec:
  coreModule: |
    module core
    type user
  tuples: [{object: "core_platform-mesh_io_account:x/acme", relation: owner, user: "user:alice"}]
`, "create", "-f", "-")
	})
}
