package cluster

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// BenchEnv names the file TestInstallFootprint appends its Markdown table
// to; without it the test skips (make bench sets it).
const BenchEnv = "MESHPLANE_CLUSTER_BENCH"

// TestInstallFootprint (make bench): `helm install` of values-small.yaml
// (the MongoDB example on) to every pod Ready, then, after a minute at
// rest, each pod's resident memory (its cgroup's rss + mapped files).
func TestInstallFootprint(t *testing.T) {
	out := os.Getenv(BenchEnv)
	if out == "" {
		t.Skipf("a benchmark: set %s=<file> (make bench does)", BenchEnv)
	}
	c := cluster(t)
	kc := clusterKubeconfig(c.Kubeconfig)
	cs := c.Client()
	const benchNS = "meshplane-bench"
	chart := umbrellaChart(t)
	tokenUsers(t, cs, benchNS, "e2e-tokens")
	start := time.Now()
	helm(t, kc, "install", "bench", chart, "-n", benchNS, "--wait", "--timeout", "15m",
		"-f", filepath.Join(chart, "values-small.yaml"), "-f", filepath.Join("testdata", "values.yaml"))
	installed := time.Since(start)
	podsReady(t, cs, benchNS)
	// At rest: the bootstrap done, the operators' first reconciles over.
	time.Sleep(time.Minute)
	mem := podMemory(t, cs, benchNS)
	var b strings.Builder
	fmt.Fprintf(&b, "\n## helm install on the test cluster (%s)\n\n", time.Now().UTC().Format("2006-01-02 15:04 UTC"))
	fmt.Fprintf(&b, "`helm install` (values-small.yaml, MongoDB example) to every pod Ready: %s\n\n", installed.Round(time.Second))
	fmt.Fprintf(&b, "| pod | memory at rest (MiB) |\n|---|---|\n")
	var names []string
	var total int64
	for n, v := range mem {
		names = append(names, n)
		total += v
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(&b, "| %s | %.1f |\n", n, float64(mem[n])/(1<<20))
	}
	fmt.Fprintf(&b, "| total | %.1f |\n", float64(total)/(1<<20))
	rss := c.ResidentMemory()
	var comps []string
	for n := range rss {
		if n != "pods" {
			comps = append(comps, n)
		}
	}
	sort.Strings(comps)
	for _, n := range comps {
		fmt.Fprintf(&b, "| (the cluster's) %s | %.1f |\n", n, float64(rss[n])/(1<<20))
	}
	t.Log(b.String())
	f, err := os.OpenFile(out, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(b.String()); err != nil {
		t.Fatal(err)
	}
	helm(t, kc, "uninstall", "bench", "-n", benchNS, "--wait")
	_ = cs.CoreV1().Namespaces().Delete(context.Background(), benchNS, metav1.DeleteOptions{})
}

// podMemory is each Ready pod's memory (total_rss + total_mapped_file of
// its cgroup v1 memory hierarchy), by pod name without the release prefix.
func podMemory(t *testing.T, cs kubernetes.Interface, ns string) map[string]int64 {
	t.Helper()
	pods, err := cs.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dirs := map[string]string{} // "pod<uid>" => cgroup directory
	_ = filepath.WalkDir("/sys/fs/cgroup/memory", func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil
		}
		if strings.HasPrefix(d.Name(), "pod") {
			dirs[strings.ReplaceAll(d.Name(), "_", "-")] = p
			return filepath.SkipDir
		}
		return nil
	})
	out := map[string]int64{}
	for _, p := range pods.Items {
		if p.Status.Phase != corev1.PodRunning {
			continue
		}
		dir, ok := dirs["pod"+string(p.UID)]
		if !ok {
			t.Errorf("no memory cgroup for pod %s (%s)", p.Name, p.UID)
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, "memory.stat"))
		if err != nil {
			t.Error(err)
			continue
		}
		var v int64
		for _, line := range strings.Split(string(b), "\n") {
			f := strings.Fields(line)
			if len(f) == 2 && (f[0] == "total_rss" || f[0] == "total_mapped_file") {
				n, _ := strconv.ParseInt(f[1], 10, 64)
				v += n
			}
		}
		out[p.Name] = v
	}
	return out
}
