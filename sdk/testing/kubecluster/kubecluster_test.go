package kubecluster_test

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/meshplane/meshplane/sdk/testing/kubecluster"
)

const (
	testImage  = "localhost/meshplane/kubecluster-testimage:test"
	pauseImage = "localhost/meshplane/kubecluster-pause:test"
)

// TestCluster starts a real single-node cluster and proves what the charts'
// tests build on: the node is Ready with the pinned kubelet; a pod from a
// locally imported image runs; a Deployment's pod answers through its
// ClusterIP Service by DNS name from another pod; a pod reaches the API
// server through the kubernetes Service, trusting its service account's CA;
// a StatefulSet's pod keeps a file on its PersistentVolume across the pod's
// deletion.
func TestCluster(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Minute) // the host lock may wait for another package's cluster
	defer cancel()
	if err := kubecluster.EnsurePrerequisites(ctx); err != nil {
		t.Skip(err)
	}
	dir := t.TempDir()
	pause, test := buildTestImages(t, dir, pauseImage, testImage)
	sandbox := pauseImage
	// `make images`' pause image, the charts' sandbox image, when it is built.
	if archive := makeImagesPause(); archive != "" {
		t.Logf("sandbox image: make images' pause (%s)", archive)
		pause, sandbox = archive, ""
	}
	start := time.Now()
	c, err := kubecluster.Start(ctx, kubecluster.Options{
		Dir: dir + "/cluster", SandboxImage: sandbox, Images: []string{pause, test}, Logf: t.Logf})
	if kubecluster.IsPrerequisite(err) {
		t.Skip(err)
	}
	if err != nil {
		dumpLogs(t, dir+"/cluster")
		t.Fatal(err)
	}
	t.Logf("cluster started, node Ready, in %s", time.Since(start).Round(time.Millisecond))
	defer func() {
		if t.Failed() {
			dumpLogs(t, c.Dir)
		}
		pids := c.PIDs()
		stopped := time.Now()
		if err := c.Stop(); err != nil {
			t.Errorf("Stop: %v", err)
		}
		t.Logf("stopped in %s", time.Since(stopped).Round(time.Millisecond))
		checkStopped(t, c.Dir, pids)
	}()
	client := c.Client()

	t.Run("node ready", func(t *testing.T) {
		n, err := client.CoreV1().Nodes().Get(ctx, c.NodeName, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got := n.Status.NodeInfo.KubeletVersion; got != kubecluster.KubernetesVersion {
			t.Errorf("kubelet version %q, want %q", got, kubecluster.KubernetesVersion)
		}
		if rt := n.Status.NodeInfo.ContainerRuntimeVersion; !strings.HasPrefix(rt, "containerd://") {
			t.Errorf("container runtime %q, want containerd", rt)
		}
	})

	t.Run("pod from an imported image", func(t *testing.T) {
		started := time.Now()
		pod := testPod("hello", "pause")
		if _, err := client.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		p := waitPod(ctx, t, client, "default", "hello", "", corev1.PodRunning)
		t.Logf("pod Running %s after its creation, IP %s", time.Since(started).Round(time.Millisecond), p.Status.PodIP)
	})

	t.Run("service by DNS name", func(t *testing.T) {
		labels := map[string]string{"app": "web"}
		web := &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: "web"},
			Spec: appsv1.DeploymentSpec{
				Replicas: ptr.To[int32](1),
				Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: labels},
					Spec:       testPod("", "serve", ":8080", "hello from web").Spec,
				},
			},
		}
		if _, err := client.AppsV1().Deployments("default").Create(ctx, web, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		svc := &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: "web"},
			Spec: corev1.ServiceSpec{Selector: labels, Ports: []corev1.ServicePort{
				{Port: 80, TargetPort: intstr.FromInt32(8080)}}},
		}
		if _, err := client.CoreV1().Services("default").Create(ctx, svc, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		get := testPod("get", "get", "http://web.default.svc."+kubecluster.ClusterDomain+"/")
		get.Spec.RestartPolicy = corev1.RestartPolicyNever
		if _, err := client.CoreV1().Pods("default").Create(ctx, get, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		p := waitPod(ctx, t, client, "default", "get", "", corev1.PodSucceeded)
		if got := terminationMessage(p); got != "hello from web" {
			t.Errorf("the client pod got %q through the Service, want %q", got, "hello from web")
		}

		// From this host: the name through the cluster DNS, the ClusterIP
		// through kube-proxy's rules.
		addrs, err := c.Resolver().LookupHost(ctx, "web.default.svc."+kubecluster.ClusterDomain)
		if err != nil {
			t.Fatal(err)
		}
		s, err := client.CoreV1().Services("default").Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(addrs) != 1 || addrs[0] != s.Spec.ClusterIP {
			t.Errorf("the cluster DNS resolved web to %v, want its ClusterIP %s", addrs, s.Spec.ClusterIP)
		}
		resp, err := (&http.Client{Timeout: 10 * time.Second}).Get("http://" + s.Spec.ClusterIP + "/")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(body) != "hello from web" {
			t.Errorf("the ClusterIP answered this host %q, want %q", body, "hello from web")
		}
	})

	t.Run("kubernetes API from a pod", func(t *testing.T) {
		api := testPod("api", "get", "https://kubernetes.default.svc/readyz")
		api.Spec.RestartPolicy = corev1.RestartPolicyNever
		if _, err := client.CoreV1().Pods("default").Create(ctx, api, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		p := waitPod(ctx, t, client, "default", "api", "", corev1.PodSucceeded)
		if got := terminationMessage(p); got != "ok" {
			t.Errorf("the API server's /readyz through the kubernetes Service answered %q, want ok", got)
		}
	})

	t.Run("statefulset volume survives the pod", func(t *testing.T) {
		labels := map[string]string{"app": "store"}
		spec := testPod("", "keep", "/data/token").Spec
		spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}
		sts := &appsv1.StatefulSet{
			ObjectMeta: metav1.ObjectMeta{Name: "store"},
			Spec: appsv1.StatefulSetSpec{
				Replicas: ptr.To[int32](1),
				Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: spec},
				VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{
					ObjectMeta: metav1.ObjectMeta{Name: "data"},
					Spec: corev1.PersistentVolumeClaimSpec{
						AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
						Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{
							corev1.ResourceStorage: resource.MustParse("1Mi")}},
					},
				}},
			},
		}
		if _, err := client.AppsV1().StatefulSets("default").Create(ctx, sts, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		first := waitPod(ctx, t, client, "default", "store-0", "", corev1.PodRunning)
		wrote := waitLog(ctx, t, client, "default", "store-0", "wrote ")
		if err := client.CoreV1().Pods("default").Delete(ctx, "store-0", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		waitPod(ctx, t, client, "default", "store-0", first.UID, corev1.PodRunning)
		found := waitLog(ctx, t, client, "default", "store-0", "found ")
		if strings.TrimPrefix(wrote, "wrote ") != strings.TrimPrefix(found, "found ") {
			t.Errorf("the second pod read %q, the first had written %q", found, wrote)
		}
		pvc, err := client.CoreV1().PersistentVolumeClaims("default").Get(ctx, "data-store-0", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if pvc.Status.Phase != corev1.ClaimBound || ptr.Deref(pvc.Spec.StorageClassName, "") != kubecluster.StorageClassName {
			t.Errorf("claim %s of class %q, want Bound of the default class %s", pvc.Status.Phase,
				ptr.Deref(pvc.Spec.StorageClassName, ""), kubecluster.StorageClassName)
		}
	})

	rss := c.ResidentMemory()
	names := slices.Sorted(maps.Keys(rss))
	var total int64
	for _, name := range names {
		total += rss[name]
		t.Logf("at rest: %s %d MiB", name, rss[name]>>20)
	}
	t.Logf("at rest: the cluster's processes and pods %d MiB (etcd runs in this test process: %d MiB)", total>>20, selfRSS()>>20)
}

// checkStopped checks that Stop left nothing of the cluster behind: no
// process it had started, no mount under dir, no pod sandbox process (shim).
func checkStopped(t *testing.T, dir string, pids map[string]int) {
	t.Helper()
	for name, pid := range pids {
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err == nil {
			t.Errorf("%s (pid %d) still runs after Stop", name, pid)
		}
	}
	mounts, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(mounts), "\n") {
		if f := strings.Fields(line); len(f) > 4 && strings.HasPrefix(f[4], dir+"/") {
			t.Errorf("still mounted after Stop: %s", f[4])
		}
	}
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, _ := os.ReadFile(p)
		if cmd := strings.ReplaceAll(string(b), "\x00", " "); strings.Contains(cmd, "containerd-shim") && strings.Contains(cmd, dir) {
			t.Errorf("a containerd shim still runs after Stop: %s", cmd)
		}
	}
	// The bridge and iptables are host-wide: another cluster may hold them as
	// soon as Stop releases the host lock, so Stop itself checks them.
}

// selfRSS is this process's resident memory (the test, the embedded etcd,
// the provisioner).
func selfRSS() int64 {
	b, _ := os.ReadFile("/proc/self/status")
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	return 0
}

// makeImagesPause is $PAUSE_IMAGE_ARCHIVE, else <repository>/bin/images/pause.tar
// if `make images` wrote it, else "".
func makeImagesPause() string {
	if p := os.Getenv("PAUSE_IMAGE_ARCHIVE"); p != "" {
		return p
	}
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	for ; dir != filepath.Dir(dir); dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.work")); err == nil {
			p := filepath.Join(dir, "bin", "images", "pause.tar")
			if _, err := os.Stat(p); err == nil {
				return p
			}
			return ""
		}
	}
	return ""
}

// testPod is a pod of the test image running "testimage args...".
func testPod(name string, args ...string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{
				Name: "main", Image: testImage, Args: args, ImagePullPolicy: corev1.PullNever,
				SecurityContext: &corev1.SecurityContext{
					RunAsNonRoot: ptr.To(true), AllowPrivilegeEscalation: ptr.To(false), ReadOnlyRootFilesystem: ptr.To(true),
				},
			}},
			TerminationGracePeriodSeconds: ptr.To[int64](2),
		},
	}
}

// waitPod waits for pod name, other than notUID, to reach phase; it fails
// at once if the pod reaches another final phase.
func waitPod(ctx context.Context, t *testing.T, client kubernetes.Interface, ns, name string, notUID types.UID, phase corev1.PodPhase) *corev1.Pod {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	last := "not found"
	for {
		p, err := client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		switch {
		case err != nil:
			last = err.Error()
		case p.UID == notUID:
			last = "still the old pod"
		case p.Status.Phase == phase:
			return p
		case p.Status.Phase == corev1.PodFailed || p.Status.Phase == corev1.PodSucceeded:
			t.Fatalf("pod %s/%s %s, want %s: %s", ns, name, p.Status.Phase, phase, podState(p))
		default:
			last = string(p.Status.Phase) + ": " + podState(p)
		}
		select {
		case <-ctx.Done():
			t.Fatalf("pod %s/%s not %s: %s", ns, name, phase, last)
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// waitLog waits for the pod's log to have a line starting with prefix and
// returns it.
func waitLog(ctx context.Context, t *testing.T, client kubernetes.Interface, ns, name, prefix string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	last := ""
	for {
		b, err := client.CoreV1().Pods(ns).GetLogs(name, &corev1.PodLogOptions{}).DoRaw(ctx)
		if err != nil {
			last = err.Error()
		} else {
			last = string(b)
			for _, line := range strings.Split(last, "\n") {
				if strings.HasPrefix(line, prefix) {
					return line
				}
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("pod %s/%s logged no %q line: %s", ns, name, prefix, last)
		case <-time.After(250 * time.Millisecond):
		}
	}
}

func podState(p *corev1.Pod) string {
	var s []string
	for _, c := range p.Status.Conditions {
		if c.Status != corev1.ConditionTrue {
			s = append(s, fmt.Sprintf("%s=%s %s", c.Type, c.Reason, c.Message))
		}
	}
	for _, cs := range p.Status.ContainerStatuses {
		switch {
		case cs.State.Waiting != nil:
			s = append(s, fmt.Sprintf("%s waiting: %s %s", cs.Name, cs.State.Waiting.Reason, cs.State.Waiting.Message))
		case cs.State.Terminated != nil:
			s = append(s, fmt.Sprintf("%s terminated: %d %s %s", cs.Name, cs.State.Terminated.ExitCode, cs.State.Terminated.Reason, cs.State.Terminated.Message))
		}
	}
	return strings.Join(s, "; ")
}

func terminationMessage(p *corev1.Pod) string {
	for _, cs := range p.Status.ContainerStatuses {
		if cs.State.Terminated != nil {
			return cs.State.Terminated.Message
		}
	}
	return ""
}

// dumpLogs logs the tail of each component's log.
func dumpLogs(t *testing.T, dir string) {
	entries, _ := os.ReadDir(dir + "/logs")
	for _, e := range entries {
		b, _ := os.ReadFile(dir + "/logs/" + e.Name())
		if len(b) > 3000 {
			b = b[len(b)-3000:]
		}
		t.Logf("--- %s (tail)\n%s", e.Name(), b)
	}
}
