package cluster

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/meshplane/meshplane/charts"
)

// helmBin is the pinned helm CLI: $HELM_BIN, else bin/helm
// (scripts/install-helm.sh, run by make test-deps).
func helmBin(t *testing.T) string {
	t.Helper()
	if b := os.Getenv("HELM_BIN"); b != "" {
		return b
	}
	b := filepath.Join(repo, "bin", "helm")
	if _, err := os.Stat(b); err != nil {
		t.Fatalf("%s missing: run scripts/install-helm.sh (make test-deps) or set HELM_BIN", b)
	}
	return b
}

// helm runs the helm CLI against the cluster and fails the test on error.
func helm(t *testing.T, c kubeconfigHolder, args ...string) string {
	t.Helper()
	out, err := helmErr(t, c, args...)
	if err != nil {
		t.Fatalf("helm %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

func helmErr(t *testing.T, c kubeconfigHolder, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, helmBin(t), append([]string{"--kubeconfig", c.kubeconfig()}, args...)...)
	home := t.TempDir()
	cmd.Env = append(os.Environ(), "HELM_CONFIG_HOME="+home, "HELM_CACHE_HOME="+home, "HELM_DATA_HOME="+home)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	t.Logf("helm %s (%s)", strings.Join(args, " "), time.Since(start).Round(time.Second))
	return out.String(), err
}

type kubeconfigHolder interface{ kubeconfig() string }

type clusterKubeconfig string

func (k clusterKubeconfig) kubeconfig() string { return string(k) }

// umbrellaChart lays the umbrella chart out with its components under
// charts/ (as a packaged chart), so helm needs no `dependency build`.
func umbrellaChart(t *testing.T) string {
	t.Helper()
	files, err := charts.UmbrellaFiles()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), charts.Umbrella)
	for _, f := range files {
		p := filepath.Join(dir, filepath.FromSlash(f.Name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// podsReady fails unless every pod of namespace ns is Ready (pods of
// finished Jobs and `helm test` pods that succeeded aside); it returns the
// pods by name.
func podsReady(t *testing.T, cs kubernetes.Interface, ns string) map[string]corev1.Pod {
	t.Helper()
	pods, err := cs.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]corev1.Pod{}
	for _, p := range pods.Items {
		if p.Status.Phase == corev1.PodSucceeded {
			continue
		}
		out[p.Name] = p
		if !ready(&p) {
			t.Errorf("pod %s/%s is not Ready: phase %s, %s", ns, p.Name, p.Status.Phase, waiting(&p))
		}
	}
	if len(out) == 0 {
		t.Errorf("no pods in %s", ns)
	}
	return out
}

func ready(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func waiting(p *corev1.Pod) string {
	var s []string
	for _, c := range p.Status.ContainerStatuses {
		if c.State.Waiting != nil {
			s = append(s, c.Name+": "+c.State.Waiting.Reason+" "+c.State.Waiting.Message)
		}
		if c.LastTerminationState.Terminated != nil {
			s = append(s, c.Name+" last exit: "+c.LastTerminationState.Terminated.Reason)
		}
	}
	return strings.Join(s, "; ")
}
