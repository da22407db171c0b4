package cluster

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

const (
	ns      = "meshplane-system"
	release = "mp"
	org     = "e2e-org"
)

// TestHelmLifecycle: helm install to every pod Ready, helm test, the
// platform journeys against the installed platform, helm upgrade with a
// changed value, the core's pod deleted, helm rollback and helm uninstall,
// each keeping (or leaving) what it should. The steps build on each other.
func TestHelmLifecycle(t *testing.T) {
	c := cluster(t)
	kc := clusterKubeconfig(c.Kubeconfig)
	cs := c.Client()
	chart := umbrellaChart(t)
	values := []string{"-f", filepath.Join(chart, "values-small.yaml"), "-f", filepath.Join("testdata", "values.yaml")}
	tokens := tokenUsers(t, cs, ns, "e2e-tokens")

	start := time.Now()
	helm(t, kc, append([]string{"install", release, chart, "-n", ns, "--wait", "--timeout", "15m"}, values...)...)
	t.Logf("helm install: every pod Ready after %s", time.Since(start).Round(time.Second))
	podsReady(t, cs, ns)
	if t.Failed() {
		t.FailNow()
	}
	helm(t, kc, "test", release, "-n", ns, "--timeout", "5m")

	env := writePlatformEnv(t, cs, ns, release)
	t.Setenv(framework.PlatformEnvEnv, env)
	t.Setenv(framework.ExternalTokenUsersEnv, tokens)
	s, err := framework.ExternalFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Cleanup(false) })

	t.Run("journeys", func(t *testing.T) {
		// The same tests `make run` is tested with, in external mode.
		goTestExternal(t, "operators/test/e2e", "TestOrganizationAndAccount", "TestAccountAdmission")
		goTestExternal(t, "gateway/test/e2e", "TestListsMatchREST", "TestSubscriptionSSE", "TestSubscriptionWebsocket")
		grantJourney(t, s)
		providerJourney(t, s)
	})
	if t.Failed() {
		t.FailNow()
	}

	t.Run("upgrade keeps data", func(t *testing.T) {
		before := podUID(t, cs, release+"-core-0")
		helm(t, kc, "upgrade", release, chart, "-n", ns, "--reuse-values", "--set", "core.resources.requests.cpu=110m", "--wait", "--timeout", "10m")
		if podUID(t, cs, release+"-core-0") == before {
			t.Error("the changed value did not roll the core's pod")
		}
		podsReady(t, cs, ns)
		checkData(t, s)
	})

	t.Run("core pod deleted", func(t *testing.T) {
		before := podUID(t, cs, release+"-core-0")
		if err := cs.CoreV1().Pods(ns).Delete(context.Background(), release+"-core-0", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		framework.Eventually(t, 5*time.Minute, 2*time.Second, "the core's pod back and Ready", func() (bool, string) {
			p, err := cs.CoreV1().Pods(ns).Get(context.Background(), release+"-core-0", metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			return string(p.UID) != before && ready(p), string(p.Status.Phase) + " " + waiting(p)
		})
		checkData(t, s)
	})

	t.Run("rollback", func(t *testing.T) {
		helm(t, kc, "rollback", release, "1", "-n", ns, "--wait", "--timeout", "10m")
		sts, err := cs.AppsV1().StatefulSets(ns).Get(context.Background(), release+"-core", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if cpu := sts.Spec.Template.Spec.Containers[0].Resources.Requests.Cpu().String(); cpu != "100m" {
			t.Errorf("after rollback the core requests cpu %s, want revision 1's 100m", cpu)
		}
		if out := helm(t, kc, "history", release, "-n", ns, "-o", "yaml"); !strings.Contains(out, "Rollback to 1") {
			t.Errorf("helm history shows no rollback:\n%s", out)
		}
		framework.Eventually(t, 5*time.Minute, 2*time.Second, "every pod Ready after the rollback", func() (bool, string) {
			return allReady(cs, ns)
		})
		checkData(t, s)
	})

	t.Run("uninstall keeps only volumes", func(t *testing.T) {
		helm(t, kc, "uninstall", release, "-n", ns, "--wait", "--timeout", "5m")
		leftovers(t, cs, ns, map[string]bool{"Secret/e2e-tokens": true, "ConfigMap/kube-root-ca.crt": true, "ServiceAccount/default": true})
	})
}

// goTestExternal runs tests of another package against the installed
// platform (external mode) and fails unless each one passed (a skip is a
// failure here: the journey did not run).
func goTestExternal(t *testing.T, pkg string, tests ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "test", "-count=1", "-v", "-timeout", "15m", "-run", "^("+strings.Join(tests, "|")+")$", "./"+pkg)
	cmd.Dir = repo
	cmd.Env = os.Environ()
	start := time.Now()
	out, err := cmd.CombinedOutput()
	t.Logf("go test ./%s -run %v: %s", pkg, tests, time.Since(start).Round(time.Second))
	for _, name := range tests {
		if !regexp.MustCompile(`(?m)^--- PASS: ` + name + ` `).Match(out) {
			t.Errorf("%s did not pass against the installed platform", name)
		}
	}
	if err != nil || t.Failed() {
		t.Errorf("go test ./%s: %v\n%s", pkg, err, tail(string(out), 8000))
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

func podUID(t *testing.T, cs kubernetes.Interface, name string) string {
	t.Helper()
	p, err := cs.CoreV1().Pods(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return string(p.UID)
}

func allReady(cs kubernetes.Interface, ns string) (bool, string) {
	pods, err := cs.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		return false, err.Error()
	}
	var notReady []string
	for _, p := range pods.Items {
		if p.Status.Phase != "Succeeded" && !ready(&p) {
			notReady = append(notReady, p.Name+": "+string(p.Status.Phase)+" "+waiting(&p))
		}
	}
	return len(notReady) == 0 && len(pods.Items) > 0, strings.Join(notReady, "; ")
}
