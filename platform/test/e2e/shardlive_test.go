package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/meshplane/meshplane/sdk/kubeconfig"
	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// TestLauncherShardAddedLive: `make run SHARDS=2`, then a third shard
// started by hand as docs/sharding.md says (the install's CA, admin
// tokens and signing key, root's kubeconfig, the proxy's request-header
// CA), with no other component restarted: an organization placed on it
// (root and b unschedulable) becomes Ready, and so does an account in it
// on the new shard. The account-operator and the security-operator find
// the new shard's initializing virtual workspace from their
// WorkspaceTypes while they run.
func TestLauncherShardAddedLive(t *testing.T) {
	root := filepath.Join(t.TempDir(), "live")
	p := startPlatform(t, root, freeBase(t), "--shards", "2")
	env := p.waitReady(t)
	kubeconfigFile := filepath.Join(root, "front-proxy", "admin.kubeconfig")
	inRoot := []string{"--context", "shard-base", "--server", env["FRONT_PROXY_URL"] + "/clusters/root"}

	startShardByHand(t, root, env, "e")
	for _, s := range []string{"root", "b"} {
		mustKubectl(t, kubeconfigFile, append(inRoot, "annotate", "shard", s, "experimental.core.kcp.io/unschedulable=true")...)
	}

	account := func(name, typ string) string {
		f := filepath.Join(t.TempDir(), name+".yaml")
		if err := os.WriteFile(f, []byte(fmt.Sprintf("apiVersion: core.platform-mesh.io/v1alpha1\nkind: Account\nmetadata: {name: %s}\nspec: {type: %s, displayName: %s}\n", name, typ, name)), 0o600); err != nil {
			t.Fatal(err)
		}
		return f
	}
	start := time.Now()
	mustKubectl(t, kubeconfigFile, "--context", "alice", "create", "-f", account("late", "org"))
	waitAccountReady(t, kubeconfigFile, "late")
	t.Logf("organization late on the shard added live Ready after %s", time.Since(start).Round(10*time.Millisecond))
	framework.RequireEqual(t, mustKubectl(t, kubeconfigFile, "--server", env["FRONT_PROXY_URL"]+"/clusters/root:orgs", "get", "workspace", "late",
		"-o", `jsonpath={.metadata.annotations.core\.kcp\.io/shard}`), "e", "shard of the organization late")
	org := env["FRONT_PROXY_URL"] + "/clusters/root:orgs:late"
	start = time.Now()
	eventuallyKubectl(t, kubeconfigFile, "--context", "alice", "--server", org, "create", "-f", account("crew", "account"))
	waitAccountReady(t, kubeconfigFile, "crew", "--server", org)
	t.Logf("account crew in late on shard e Ready after %s", time.Since(start).Round(10*time.Millisecond))
	framework.RequireEqual(t, mustKubectl(t, kubeconfigFile, "--server", org, "get", "workspace", "crew", "-o", `jsonpath={.metadata.annotations.core\.kcp\.io/shard}`),
		"e", "shard of the account crew")
	p.stop(t)
}

// startShardByHand starts a shard named name next to a running platform
// in root, as docs/sharding.md says (the install's CA, admin tokens and
// signing key, root's kubeconfig, the proxy's request-header CA), on free
// ports outside the platform's range, and waits until it is registered in
// root. It is stopped at cleanup.
func startShardByHand(t *testing.T, root string, env map[string]string, name string) {
	t.Helper()
	kubeconfigFile := filepath.Join(root, "front-proxy", "admin.kubeconfig")
	inRoot := []string{"--context", "shard-base", "--server", env["FRONT_PROXY_URL"] + "/clusters/root"}
	dir := filepath.Join(root, "shard-"+name)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"ca.crt", "ca.key", "admin-tokens", "service-account.key"} {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	rootShard := filepath.Join(dir, "root-shard.kubeconfig")
	if err := kubeconfig.WithContext(filepath.Join(root, "admin.kubeconfig"), "shard-base", rootShard); err != nil {
		t.Fatal(err)
	}
	bin, err := framework.MeshplaneBinary()
	if err != nil {
		t.Fatal(err)
	}
	ports := freeBase(t)
	cmd := exec.Command(bin, "start", "--root-directory", dir, "--bind-address", "127.0.0.1",
		"--secure-port", fmt.Sprint(ports), "--embedded-etcd-client-port", fmt.Sprint(ports+1), "--embedded-etcd-peer-port", fmt.Sprint(ports+2),
		"--shard-name", name, "--root-shard-kubeconfig", rootShard,
		"--requestheader-client-ca-file", filepath.Join(root, "front-proxy", "requestheader-ca.crt"),
		"--requestheader-allowed-names", "meshplane-front-proxy", "--shard-external-url", env["FRONT_PROXY_URL"], "--replica-source=cache",
		"--token-auth-file", filepath.Join(root, "demo-users.csv"),
		"--authorization-webhook-config-file", filepath.Join(root, "rebac-authz-webhook", "core-webhook.kubeconfig"),
		"--authorization-webhook-version", "v1", "--authorization-webhook-rules-path", "/rules",
		"--authorization-webhook-cache-authorized-ttl", "2s", "--authorization-webhook-cache-unauthorized-ttl", "2s")
	logFile, err := os.Create(filepath.Join(dir, "meshplane.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		_ = logFile.Close()
		if t.Failed() {
			if b, err := os.ReadFile(logFile.Name()); err == nil {
				t.Logf("shard %s log:\n%s", name, tail(string(b), 60))
			}
		}
	})
	framework.Eventually(t, 2*time.Minute, 500*time.Millisecond, "shard "+name+" to register in root", func() (bool, string) {
		out, err := kubectl(t, kubeconfigFile, append(inRoot, "get", "shards", "-o", "jsonpath={.items[*].metadata.name}")...)
		return err == nil && slices.Contains(strings.Fields(out), name), out
	})
}
