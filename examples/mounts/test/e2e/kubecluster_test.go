package e2e

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

func kubeCluster(name string) string {
	return fmt.Sprintf(`apiVersion: mounts.examples.meshplane.io/v1alpha1
kind: KubeCluster
metadata:
  name: %s
  annotations:
    experimental.tenancy.kcp.io/is-mount: "true"
spec:
  secretRef: {namespace: default, name: %s-kubeconfig}
`, name, name)
}

func mountedWorkspace(name, kubeCluster string) string {
	return fmt.Sprintf(`apiVersion: tenancy.kcp.io/v1alpha1
kind: Workspace
metadata:
  name: %s
spec:
  mount:
    ref:
      apiVersion: mounts.examples.meshplane.io/v1alpha1
      kind: KubeCluster
      name: %s
`, name, kubeCluster)
}

func phaseOf(t *testing.T, k *framework.Kubectl, args ...string) string {
	t.Helper()
	out, _, err := k.RunErr(t, append([]string{"get"}, append(args, "-o", "jsonpath={.status.phase}")...)...)
	if err != nil {
		return err.Error()
	}
	return out
}

func waitPhase(t *testing.T, k *framework.Kubectl, want string, args ...string) {
	t.Helper()
	framework.Eventually(t, 60*time.Second, 100*time.Millisecond, fmt.Sprintf("%s to be %s", strings.Join(args, " "), want), func() (bool, string) {
		got := phaseOf(t, k, args...)
		return got == want, "phase " + got
	})
}

// TestKubeClusterMountsAnotherMeshplane: a KubeCluster in a workspace of
// Meshplane A names a kubeconfig of a workspace of Meshplane B; the example
// controller makes it Ready, a Workspace in A that mounts it serves B's
// workspace to kubectl (list, get, watch, create), and when B's credentials
// go, the mount goes Connecting and A answers 503.
func TestKubeClusterMountsAnotherMeshplane(t *testing.T) {
	a := framework.SharedServer(t)
	b := framework.StartServer(t)

	target := b.CreateOrg(t, "target")
	inTarget := b.KubectlFor(target.Path)
	inTarget.Run(t, "create", "configmap", "from-b", "-n", "default", "--from-literal=server=b")

	org := a.CreateOrg(t, "mounts")
	inOrg := a.KubectlFor(org.Path)
	inOrg.Run(t, "apply", "-f", filepath.Join("..", "..", "config", "kubeclusters.yaml"))
	framework.Eventually(t, 30*time.Second, 200*time.Millisecond, "the KubeCluster CRD to be served", func() (bool, string) {
		_, errOut, err := inOrg.RunErr(t, "get", "kubeclusters")
		return err == nil, errOut
	})
	kubeconfigB := b.WriteAdminKubeconfig(t, target.Path)
	inOrg.Run(t, "create", "secret", "generic", "b-kubeconfig", "-n", "default", "--from-file=kubeconfig="+kubeconfigB)
	inOrg.RunStdin(t, kubeCluster("b"), "create", "-f", "-")
	health := startMounts(t, a, a.WriteAdminKubeconfig(t, org.Path), fmt.Sprintf("127.0.0.1:%d", b.Port))
	waitPhase(t, inOrg, "Ready", "kubecluster", "b")
	url := inOrg.Run(t, "get", "kubecluster", "b", "-o", "jsonpath={.status.URL}")

	inOrg.RunStdin(t, mountedWorkspace("b", "b"), "create", "-f", "-")
	waitPhase(t, inOrg, "Ready", "workspace", "b")
	if got := inOrg.Run(t, "get", "workspace", "b", "-o", "jsonpath={.spec.URL}"); got != url {
		t.Errorf("the mounted workspace's spec.URL is %q, want the KubeCluster's status.URL %q", got, url)
	}

	through := a.KubectlFor(org.Path + ":b")
	if got := through.Run(t, "get", "configmap", "from-b", "-n", "default", "-o", "jsonpath={.data.server}"); got != "b" {
		t.Fatalf("kubectl get through the mount: data.server=%q, want b", got)
	}
	if out := through.Run(t, "get", "configmaps", "-n", "default", "-o", "name"); !strings.Contains(out, "configmap/from-b") {
		t.Fatalf("kubectl get configmaps through the mount lacks B's from-b:\n%s", out)
	}
	watch := through.Background(t, time.Minute, "get", "configmaps", "-n", "default", "--watch", "-o", "name")
	watch.WaitFor(t, 30*time.Second, "the watch's initial list", func(o string) bool { return strings.Contains(o, "configmap/from-b") })
	inTarget.Run(t, "create", "configmap", "later-in-b", "-n", "default")
	watch.WaitFor(t, 30*time.Second, "B's new configmap in the watch through the mount", func(o string) bool { return strings.Contains(o, "configmap/later-in-b") })
	watch.Stop()
	through.Run(t, "create", "configmap", "from-a", "-n", "default")
	inTarget.Run(t, "get", "configmap", "from-a", "-n", "default")

	// Anyone may write a mount object: one in another workspace that copies
	// the KubeCluster's URL gets a 403 from the proxy, not B's API.
	other := a.CreateOrg(t, "thief")
	inOther := a.KubectlFor(other.Path)
	inOther.Run(t, "apply", "-f", filepath.Join("..", "..", "config", "kubeclusters.yaml"))
	framework.Eventually(t, 30*time.Second, 200*time.Millisecond, "the KubeCluster CRD to be served", func() (bool, string) {
		_, errOut, err := inOther.RunErr(t, "get", "kubeclusters")
		return err == nil, errOut
	})
	inOther.RunStdin(t, kubeCluster("b"), "create", "-f", "-")
	inOther.Run(t, "patch", "kubecluster", "b", "--subresource=status", "--type=merge", "-p", fmt.Sprintf(`{"status":{"phase":"Ready","URL":%q}}`, url))
	inOther.RunStdin(t, mountedWorkspace("copy", "b"), "create", "-f", "-")
	waitPhase(t, inOther, "Ready", "workspace", "copy")
	if resp := a.AdminRequest(t, http.MethodGet, "/clusters/"+other.Path+":copy/api/v1/namespaces/default/configmaps", nil); resp.Code != http.StatusForbidden {
		t.Errorf("a copied mount URL: GET through it answered %d, want 403 from the proxy: %s", resp.Code, resp)
	}

	// A kubeconfig is written by whoever may write Secrets: one naming an
	// internal API on loopback that answers GET /api (or a closed port) is
	// not on --target-allowed-hosts, stays Connecting with the one message
	// for every failure, and the internal API sees no request.
	var internalHits atomic.Int64
	internal := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		internalHits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"kind":"APIVersions","versions":["v1"],"serverAddressByClientCIDRs":[]}`)
	}))
	defer internal.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String()
	_ = ln.Close()
	messages := map[string]string{}
	for name, server := range map[string]string{"internal": internal.URL, "closed": closed} {
		kc := fmt.Sprintf("apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: %q}}]\nusers: [{name: u, user: {token: t}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\ncurrent-context: c\n", server)
		inOrg.Run(t, "create", "secret", "generic", name+"-kubeconfig", "-n", "default", "--from-literal=kubeconfig="+kc)
		inOrg.RunStdin(t, kubeCluster(name), "create", "-f", "-")
		var msg string
		framework.Eventually(t, 60*time.Second, 200*time.Millisecond, "KubeCluster "+name+" to be checked", func() (bool, string) {
			out := inOrg.Run(t, "get", "kubecluster", name, "-o", "jsonpath={.status.phase}|{.status.message}")
			phase, m, _ := strings.Cut(out, "|")
			msg = m
			return phase == "Connecting" && strings.Contains(m, "GET /api"), out
		})
		messages[name] = strings.ReplaceAll(msg, server, "<server>")
	}
	if messages["internal"] != messages["closed"] {
		t.Errorf("a target on an open port and one on a closed port tell apart: %q vs %q", messages["internal"], messages["closed"])
	}
	if n := internalHits.Load(); n != 0 {
		t.Errorf("the internal API was reached %d times by the example proxy", n)
	}

	resp, err := http.Get(health + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	metrics, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	for _, want := range []string{`kubecluster_mounts_requests_total{result="forwarded"}`, `kubecluster_mounts_requests_total{result="refused"}`} {
		if !strings.Contains(string(metrics), want) {
			t.Errorf("the proxy's /metrics lacks %s", want)
		}
	}

	// B's credentials go: the mount is Connecting, the workspace
	// Unavailable, requests get a 503.
	inOrg.Run(t, "delete", "secret", "b-kubeconfig", "-n", "default")
	waitPhase(t, inOrg, "Connecting", "kubecluster", "b")
	waitPhase(t, inOrg, "Unavailable", "workspace", "b")
	if resp := a.AdminRequest(t, http.MethodGet, "/clusters/"+org.Path+":b/api/v1/namespaces", nil); resp.Code != http.StatusServiceUnavailable {
		t.Errorf("GET through a mount whose KubeCluster is Connecting: %d, want 503: %s", resp.Code, resp)
	}
	// And come back.
	inOrg.Run(t, "create", "secret", "generic", "b-kubeconfig", "-n", "default", "--from-file=kubeconfig="+kubeconfigB)
	waitPhase(t, inOrg, "Ready", "workspace", "b")
	through.Run(t, "get", "configmap", "from-b", "-n", "default")
	_ = os.Remove(kubeconfigB)
}
