package framework_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

func TestMain(m *testing.M) { os.Exit(framework.RunMain(m)) }

// TestStartConnectStop starts a core with Start, reaches it again in
// external mode through Connect, and stops it cleanly.
func TestStartConnectStop(t *testing.T) {
	framework.SkipIfExternal(t, "it starts and stops a core of its own")
	s, err := framework.Start()
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { _ = s.Cleanup(t.Failed()) })
	if !s.Running() || s.PID == 0 {
		t.Fatalf("started server not running (pid %d)", s.PID)
	}

	ext, err := framework.Connect(s.Kubeconfig, "")
	if err != nil {
		t.Fatalf("Connect(%s): %v", s.Kubeconfig, err)
	}
	t.Cleanup(func() { _ = ext.Cleanup(false) })
	framework.RequireEqual(t, ext.BaseURL, s.BaseURL, "base URL of the external server, from the shard-base context")
	framework.RequireEqual(t, ext.External, true, "Connect's server is external")
	r := ext.AdminRequest(t, "GET", "/clusters/root/api/v1/namespaces/default", nil)
	framework.RequireCode(t, r, "GET the default namespace of root through the external server", 200)
	if err := ext.Restart(); err == nil {
		t.Fatalf("Restart of an external server should fail")
	}

	if err := s.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if s.Running() {
		t.Fatalf("server still running after Stop")
	}
}

func TestReadPlatformEnv(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "platform.env")
	content := "# written by the platform\nexport KUBECONFIG=admin.kubeconfig\nCORE_URL='https://127.0.0.1:6443'\nGATEWAY_URL=\"https://127.0.0.1:7443\"\n\n"
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := framework.ReadPlatformEnv(path)
	if err != nil {
		t.Fatalf("ReadPlatformEnv: %v", err)
	}
	framework.RequireEqual(t, p.Kubeconfig, filepath.Join(dir, "admin.kubeconfig"), "KUBECONFIG, relative to the file")
	framework.RequireEqual(t, p.CoreURL, "https://127.0.0.1:6443", "CORE_URL without quotes")
	framework.RequireEqual(t, p.URL("gateway"), "https://127.0.0.1:7443", "GATEWAY_URL")

	if err := os.WriteFile(path, []byte("CORE_URL=x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := framework.ReadPlatformEnv(path); err == nil {
		t.Fatalf("a platform.env without KUBECONFIG= should be refused")
	}
}

func TestBinaryEnv(t *testing.T) {
	for name, want := range map[string]string{"meshplane": "MESHPLANE_BIN", "kubectl-ws": "KUBECTL_WS_BIN", "meshplane-bench": "MESHPLANE_BENCH_BIN"} {
		framework.RequireEqual(t, framework.BinaryEnv(name), want, "BinaryEnv("+name+")")
	}
}

func TestBinaryFromEnv(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("KIT_SELF_TEST_BIN", self)
	got, err := framework.Binary("kit-self-test", "sdk", "./nothing")
	if err != nil {
		t.Fatalf("Binary with KIT_SELF_TEST_BIN set: %v", err)
	}
	framework.RequireEqual(t, got, self, "Binary honours <NAME>_BIN")
}

func TestReadTokenUsers(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tokens.csv")
	if err := os.WriteFile(path, []byte("t1,alice,uid-alice,\"e2e:users,x\"\nt2,bob,uid-bob\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	users, err := framework.ReadTokenUsers(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(users) != 2 || users[0].Name != "alice" || users[0].Token != "t1" || len(users[0].Groups) != 2 || users[0].Groups[1] != "x" ||
		users[1].Name != "bob" || users[1].UID != "uid-bob" || users[1].Groups != nil {
		t.Errorf("ReadTokenUsers = %+v", users)
	}
	if err := os.WriteFile(path, []byte("t1,alice\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := framework.ReadTokenUsers(path); err == nil {
		t.Error("a line without a uid was accepted")
	}
}
