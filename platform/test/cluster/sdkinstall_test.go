package cluster

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/meshplane/meshplane/sdk/platformenv"
	"github.com/meshplane/meshplane/sdk/testing/framework"
	"github.com/meshplane/meshplane/sdk/testing/kubecluster"
)

// TestSDKInstall: `meshplane-platform install` (the Helm SDK, the charts
// built into the binary) brings every pod of a release of its own to Ready
// and writes an admin kubeconfig and platform.env that reach the platform
// through the NodePorts; run twice it is idempotent (no pod restarted);
// `meshplane-platform uninstall --delete-volumes` leaves no volume. It runs
// after TestHelmLifecycle uninstalled its release (two platforms would not
// fit the two CPUs).
func TestSDKInstall(t *testing.T) {
	c := cluster(t)
	cs := c.Client()
	bin, err := framework.Binary("meshplane-platform", "platform", "./cmd/meshplane-platform")
	if err != nil {
		t.Fatal(err)
	}
	const sdkNS = "meshplane-sdk"
	out := t.TempDir()
	chartDir := filepath.Join(repo, "charts", "meshplane")
	args := []string{"install", "--kubeconfig", c.Kubeconfig, "--namespace", sdkNS, "--release-name", "sdk",
		"-f", filepath.Join(chartDir, "values-small.yaml"), "-f", filepath.Join("testdata", "values.yaml"),
		"--set", "core.staticTokensSecret=", "--set", "examples.enabled=false", "--output-dir", out, "--timeout", "15m"}
	run := func(args ...string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
		defer cancel()
		start := time.Now()
		b, err := exec.CommandContext(ctx, bin, args...).CombinedOutput()
		t.Logf("meshplane-platform %s: %s", args[0], time.Since(start).Round(time.Second))
		if err != nil {
			t.Fatalf("meshplane-platform %s: %v\n%s", strings.Join(args, " "), err, b)
		}
		return string(b)
	}
	progress := run(args...)
	t.Logf("install output:\n%s", tail(progress, 3000))
	before := podsReady(t, cs, sdkNS)
	if t.Failed() {
		t.FailNow()
	}

	env, err := platformenv.Read(filepath.Join(out, platformenv.FileName))
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"CORE_URL", "GRAPHQL_URL"} {
		if !strings.Contains(env[k], kubecluster.NodeIP+":") {
			t.Errorf("platform.env %s=%q, want the node's NodePort", k, env[k])
		}
	}
	k := &framework.Kubectl{Kubeconfig: env["KUBECONFIG"], GlobalArgs: []string{"--context", "root"}}
	if ws := k.Run(t, "get", "workspaces", "-o", "name"); !strings.Contains(ws, "orgs") {
		t.Errorf("root's workspaces through the written kubeconfig: %q, want orgs", ws)
	}

	// Again: the same result, nothing restarted.
	run(args...)
	after := podsReady(t, cs, sdkNS)
	for name, p := range before {
		if q, ok := after[name]; !ok || q.UID != p.UID {
			t.Errorf("pod %s replaced by the second, identical install", name)
		}
	}

	run("uninstall", "--kubeconfig", c.Kubeconfig, "--namespace", sdkNS, "--release-name", "sdk", "--delete-volumes")
	framework.Eventually(t, 3*time.Minute, 2*time.Second, "no volume left", func() (bool, string) {
		pvcs, err := cs.CoreV1().PersistentVolumeClaims(sdkNS).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		return len(pvcs.Items) == 0, strings.Join(metaNames(pvcs.Items, func(i int) string { return pvcs.Items[i].Name }), ",")
	})
}
