// Package launcher tests `make run EXAMPLES=mongodb,postgres`: the real
// meshplane-platform with both example providers, used as docs/examples.md
// says, and stopped cleanly (PostgreSQL included).
package launcher

import (
	"context"
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/meshplane/meshplane/platform/launcher"
	"github.com/meshplane/meshplane/sdk/platformenv"
	"github.com/meshplane/meshplane/sdk/testing/framework"
)

func TestMain(m *testing.M) {
	code := m.Run()
	framework.CleanupBinaries()
	os.Exit(code)
}

// binDir links the platform's binaries and the examples' providers.
func binDir(t *testing.T) string {
	dir, err := framework.PlatformBinDir(
		framework.BinarySpec{Name: "mongodb-provider", Module: "examples", Pkg: "./mongodb/cmd/mongodb-provider"},
		framework.BinarySpec{Name: "postgres-provider", Module: "examples", Pkg: "./postgres/cmd/postgres-provider"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

func freeBase(t *testing.T) int {
	for range 50 {
		base := 20000 + rand.IntN(2000)*launcher.PortRange
		if (launcher.Ports{Base: base}).CheckFree() == nil {
			return base
		}
	}
	t.Fatal("no free port range found")
	return 0
}

func TestMakeRunExamples(t *testing.T) {
	framework.SkipIfExternal(t, "starts a platform of its own")
	launcherBin, err := framework.Binary("meshplane-platform", "platform", "./cmd/meshplane-platform")
	if err != nil {
		t.Fatal(err)
	}
	root, err := framework.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir, base := t.TempDir(), freeBase(t)
	logPath := filepath.Join(t.TempDir(), "platform.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	cmd := exec.Command(launcherBin, "--root-directory", dir, "--port-base", strconv.Itoa(base), "--bin-dir", binDir(t),
		"--examples", "mongodb,postgres", "--examples-dir", filepath.Join(root, "examples"))
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			_ = cmd.Process.Signal(syscall.SIGINT)
			select {
			case <-done:
			case <-time.After(90 * time.Second):
				_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			}
		}
		if t.Failed() {
			b, _ := os.ReadFile(logPath)
			s := string(b)
			if len(s) > 12000 {
				s = s[len(s)-12000:]
			}
			t.Logf("launcher output:\n%s", s)
		}
	})

	var env map[string]string
	framework.Eventually(t, 5*time.Minute, 250*time.Millisecond, "platform.env", func() (bool, string) {
		select {
		case err := <-done:
			t.Fatalf("the launcher exited before the platform was ready: %v", err)
		default:
		}
		env, err = platformenv.Read(filepath.Join(dir, platformenv.FileName))
		return err == nil, fmt.Sprint(err)
	})
	dsn := env["POSTGRES_DSN"]
	if !strings.Contains(dsn, fmt.Sprintf("@127.0.0.1:%d/", base+15)) {
		t.Fatalf("POSTGRES_DSN %q is not on port offset 15", dsn)
	}
	k := func(ws string) *framework.Kubectl {
		return &framework.Kubectl{Kubeconfig: env["KUBECONFIG"], GlobalArgs: []string{"--context", "root", "--server", env["CORE_URL"] + "/clusters/" + ws}}
	}

	// A Database in the demo workspace: a real database, credentials that work.
	k("root:examples-postgres-demo").RunStdin(t, `apiVersion: postgres.examples.meshplane.io/v1alpha1
kind: Database
metadata: {name: app, namespace: default}
spec: {owner: shop}
`, "apply", "-f", "-")
	k("root:examples-postgres-demo").Run(t, "wait", "--for=condition=Ready", "database/app", "--timeout=90s")
	uriB64 := k("root:examples-postgres-demo").Run(t, "get", "secret", "app-credentials", "-o", "jsonpath={.data.uri}")
	uri, err := base64.StdEncoding.DecodeString(uriB64)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, string(uri))
	if err != nil {
		t.Fatalf("connecting with the delivered credentials: %v", err)
	}
	var db string
	if err := conn.QueryRow(ctx, "SELECT current_database()").Scan(&db); err != nil || !strings.HasSuffix(db, "_default_app") {
		t.Errorf("current_database() = %q, %v", db, err)
	}
	conn.Close(ctx)

	// A MongoDB in the demo workspace reaches the downstream workspace.
	k("root:examples-mongodb-demo").RunStdin(t, `apiVersion: mongodb.examples.meshplane.io/v1alpha1
kind: MongoDB
metadata: {name: orders, namespace: default}
spec: {version: "7.0.12", storageSize: 1Gi}
`, "apply", "-f", "-")
	k("root:examples-mongodb-demo").Run(t, "wait", "--for=condition=Synced", "mongodb/orders", "--timeout=90s")
	if out := k("root:examples-mongodb-downstream").Run(t, "-n", "mongodb-provider", "get", "mongodbcommunity", "-l", "mongodb.examples.meshplane.io/name=orders", "-o", "name"); !strings.Contains(out, "mdb-") {
		t.Errorf("no downstream object: %q", out)
	}

	// A tenant binds the export from an account of their own organization
	// (docs/examples.md, "Binding from your organization"): bind is every
	// signed-in user's through the provider's config/kcp/bind.yaml, and
	// the organization's model has the account's bound Databases.
	as := func(user, ws string) *framework.Kubectl {
		return &framework.Kubectl{Kubeconfig: env["KUBECONFIG"], GlobalArgs: []string{"--context", user, "--server", env["CORE_URL"] + "/clusters/" + ws}}
	}
	as("alice", "root:orgs").RunStdin(t, "apiVersion: core.platform-mesh.io/v1alpha1\nkind: Account\nmetadata: {name: shop}\nspec: {type: org, displayName: Shop, creator: alice}\n", "create", "-f", "-")
	as("alice", "root:orgs").Run(t, "wait", "--for=condition=Ready", "account/shop", "--timeout=120s")
	framework.Eventually(t, 60*time.Second, 500*time.Millisecond, "alice to create an account in shop", func() (bool, string) {
		_, out, err := as("alice", "root:orgs:shop").RunStdinErr(t, "apiVersion: core.platform-mesh.io/v1alpha1\nkind: Account\nmetadata: {name: web}\nspec: {type: account, displayName: Web, creator: alice}\n", "apply", "-f", "-")
		return err == nil, out
	})
	as("alice", "root:orgs:shop").Run(t, "wait", "--for=condition=Ready", "account/web", "--timeout=120s")
	as("alice", "root:orgs:shop:web").RunStdin(t, `apiVersion: apis.kcp.io/v1alpha2
kind: APIBinding
metadata: {name: postgres}
spec:
  reference: {export: {path: root:examples-postgres, name: postgres.examples.meshplane.io}}
  permissionClaims:
  - {group: "", resource: secrets, verbs: [get, create, update, delete], selector: {matchAll: true}, state: Accepted}
`, "apply", "-f", "-")
	as("alice", "root:orgs:shop:web").Run(t, "wait", "--for=jsonpath={.status.phase}=Bound", "apibinding/postgres", "--timeout=60s")
	framework.Eventually(t, 90*time.Second, time.Second, "alice to create a Database in shop:web", func() (bool, string) {
		_, out, err := as("alice", "root:orgs:shop:web").RunStdinErr(t, `apiVersion: postgres.examples.meshplane.io/v1alpha1
kind: Database
metadata: {name: web, namespace: default}
spec: {owner: web}
`, "apply", "-f", "-")
		return err == nil, out
	})
	as("alice", "root:orgs:shop:web").Run(t, "wait", "--for=condition=Ready", "database/web", "--timeout=90s")

	// Ctrl-C stops everything, PostgreSQL included.
	stopped = true
	_ = cmd.Process.Signal(syscall.SIGINT)
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("the launcher exited with %v after Ctrl-C", err)
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("the launcher still runs 2m after Ctrl-C")
	}
	if c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", base+15), time.Second); err == nil {
		c.Close()
		t.Error("PostgreSQL still listens after the launcher stopped")
	}
}
