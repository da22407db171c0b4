package install

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/meshplane/meshplane/charts"
	"github.com/meshplane/meshplane/sdk/platformenv"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

const testNamespace = "meshplane-system"

func lifecycleOptions(kubeconfig, outDir string, out *bytes.Buffer) *Options {
	o := NewOptions(nil)
	o.Kubeconfig, o.Chart, o.OutputDir, o.Out = kubeconfig, testChart, outDir, out
	o.Timeout = 8 * time.Second
	return o
}

// Against a real kube-apiserver (no controller manager, no kubelet): the
// release lifecycle with the test chart, then the embedded charts.
//
// testLifecycle: an install whose components never become ready
// fails after --timeout naming each one and its pod's last event; install
// again upgrades; outputs point at the NodePorts; uninstall keeps the
// volumes, a second uninstall has nothing to do, --delete-volumes deletes
// them.
func TestOnKubeAPIServer(t *testing.T) {
	kubeconfig := startKubeAPIServer(t)
	t.Run("lifecycle", func(t *testing.T) { testLifecycle(t, kubeconfig) })
	t.Run("embedded charts", func(t *testing.T) { testEmbeddedCharts(t, kubeconfig) })
}

func testLifecycle(t *testing.T, kubeconfig string) {
	ctx := context.Background()
	restCfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	client := kubernetes.NewForConfigOrDie(restCfg)
	outDir := t.TempDir()

	// What the scheduler leaves when no node fits: the core's pod, Pending,
	// with a FailedScheduling event (there is no scheduler here to write it).
	mustCreate(t, func() error {
		_, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: testNamespace}}, metav1.CreateOptions{})
		return err
	})
	mustCreate(t, func() error {
		_, err := client.CoreV1().ServiceAccounts(testNamespace).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{})
		return err
	})
	mustCreate(t, func() error {
		_, err := client.CoreV1().Pods(testNamespace).Create(ctx, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "meshplane-core-0", Labels: map[string]string{InstanceLabel: "meshplane", "app.kubernetes.io/name": "core"}},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "core", Image: "registry.invalid/meshplane/meshplane:0.1.0"}}},
		}, metav1.CreateOptions{})
		return err
	})
	mustCreate(t, func() error {
		po, err := client.CoreV1().Pods(testNamespace).Get(ctx, "meshplane-core-0", metav1.GetOptions{})
		if err != nil {
			return err
		}
		po.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable", LastTransitionTime: metav1.Now()}}
		_, err = client.CoreV1().Pods(testNamespace).UpdateStatus(ctx, po, metav1.UpdateOptions{})
		return err
	})
	mustCreate(t, func() error {
		now := metav1.Now()
		_, err := client.CoreV1().Events(testNamespace).Create(ctx, &corev1.Event{
			ObjectMeta:     metav1.ObjectMeta{Name: "meshplane-core-0.scheduling"},
			InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: testNamespace, Name: "meshplane-core-0"},
			Reason:         "FailedScheduling", Message: "0/1 nodes are available: 1 Insufficient memory.",
			Type: corev1.EventTypeWarning, FirstTimestamp: now, LastTimestamp: now, Count: 1,
			Source: corev1.EventSource{Component: "default-scheduler"},
		}, metav1.CreateOptions{})
		return err
	})

	t.Run("install times out naming the components", func(t *testing.T) {
		var out bytes.Buffer
		err := Install(ctx, lifecycleOptions(kubeconfig, outDir, &out))
		if err == nil {
			t.Fatalf("install succeeded with no controller to make anything ready:\n%s", out.String())
		}
		msg := err.Error()
		for _, want := range []string{
			"install of release meshplane", "not ready after 8s",
			"core 0/1", "pod meshplane-core-0: Pending", "FailedScheduling: 0/1 nodes are available: 1 Insufficient memory.",
			"gateway 0/1: no pods",
		} {
			if !strings.Contains(msg, want) {
				t.Errorf("install error lacks %q:\n%s", want, msg)
			}
		}
		for _, want := range []string{"core 0/1 (Unschedulable)\n", "gateway 0/1\n"} {
			if !strings.Contains(out.String(), want) {
				t.Errorf("progress lacks %q:\n%s", want, out.String())
			}
		}
		if _, err := os.Stat(filepath.Join(outDir, platformenv.FileName)); !os.IsNotExist(err) {
			t.Errorf("a failed install wrote platform.env (stat: %v)", err)
		}
	})

	var corePort, gatewayPort int32
	t.Run("install again upgrades and writes the outputs", func(t *testing.T) {
		var out bytes.Buffer
		o := lifecycleOptions(kubeconfig, outDir, &out)
		o.Wait = false // nothing becomes ready here; the hook Job would wait forever too
		o.Set = []string{"bootstrap.enabled=false", "core.serviceType=NodePort", "core.logLevel=7"}
		o.NodeAddress = "127.0.0.1"
		if err := Install(ctx, o); err != nil {
			t.Fatalf("install: %v\n%s", err, out.String())
		}
		if !strings.Contains(out.String(), "release meshplane upgraded (revision 2") {
			t.Errorf("output does not report revision 2 as an upgrade:\n%s", out.String())
		}
		sts, err := client.AppsV1().StatefulSets(testNamespace).Get(ctx, "meshplane-core", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if args := sts.Spec.Template.Spec.Containers[0].Args; !strings.Contains(strings.Join(args, " "), "-v=7") {
			t.Errorf("core args %v, want -v=7 from --set", args)
		}
		corePort = nodePort(t, client, "meshplane-core")
		gatewayPort = nodePort(t, client, "meshplane-gateway")

		env, err := platformenv.Read(filepath.Join(outDir, platformenv.FileName))
		if err != nil {
			t.Fatal(err)
		}
		wantEnv := map[string]string{
			"KUBECONFIG":  filepath.Join(outDir, AdminKubeconfigFile),
			"CORE_URL":    fmt.Sprintf("https://127.0.0.1:%d", corePort),
			"GRAPHQL_URL": fmt.Sprintf("http://127.0.0.1:%d", gatewayPort),
		}
		for k, v := range wantEnv {
			if env[k] != v {
				t.Errorf("platform.env %s=%q, want %q", k, env[k], v)
			}
		}
		cfg, err := clientcmd.LoadFromFile(filepath.Join(outDir, AdminKubeconfigFile))
		if err != nil {
			t.Fatal(err)
		}
		cl := cfg.Clusters["root"]
		if want := fmt.Sprintf("https://127.0.0.1:%d/clusters/root", corePort); cl == nil || cl.Server != want || cl.TLSServerName != "meshplane-core.meshplane-system.svc" {
			t.Errorf("admin kubeconfig cluster = %+v, want server %s and tls-server-name meshplane-core.meshplane-system.svc", cl, want)
		}
		if st, err := os.Stat(filepath.Join(outDir, AdminKubeconfigFile)); err != nil || st.Mode().Perm() != 0o600 {
			t.Errorf("admin kubeconfig mode: %v %v, want 0600", st.Mode(), err)
		}
	})

	t.Run("install with the same values is a no-op upgrade", func(t *testing.T) {
		var out bytes.Buffer
		o := lifecycleOptions(kubeconfig, outDir, &out)
		o.Wait = false
		o.Set = []string{"bootstrap.enabled=false", "core.serviceType=NodePort", "core.logLevel=7"}
		o.NodeAddress = "127.0.0.1"
		if err := Install(ctx, o); err != nil {
			t.Fatalf("install: %v\n%s", err, out.String())
		}
		if !strings.Contains(out.String(), "revision 3") {
			t.Errorf("output does not report revision 3:\n%s", out.String())
		}
		if p := nodePort(t, client, "meshplane-core"); p != corePort {
			t.Errorf("core NodePort changed from %d to %d on a same-values upgrade", corePort, p)
		}
	})

	t.Run("port-forward needs a Ready pod", func(t *testing.T) {
		var out bytes.Buffer
		o := lifecycleOptions(kubeconfig, t.TempDir(), &out)
		o.Wait, o.PortForward = false, true
		o.Set = []string{"bootstrap.enabled=false", "core.logLevel=7"} // ClusterIP Services
		err := Install(ctx, o)
		if err == nil || !strings.Contains(err.Error(), "Service meshplane-system/meshplane-core: no Ready pod to forward to") {
			t.Errorf("--port-forward with no Ready pod: %v, want it named\n%s", err, out.String())
		}
	})

	t.Run("bad input", func(t *testing.T) {
		o := lifecycleOptions(kubeconfig, outDir, &bytes.Buffer{})
		o.Context = "nowhere"
		if err := Install(ctx, o); err == nil || !strings.Contains(err.Error(), `kube context "nowhere" not found`) {
			t.Errorf("--context nowhere: %v", err)
		}
		o = lifecycleOptions(kubeconfig, outDir, &bytes.Buffer{})
		o.Set = []string{"core.replicas=0"}
		if err := Install(ctx, o); err == nil || !strings.Contains(err.Error(), "values.schema.json") {
			t.Errorf("core.replicas=0: %v, want a values.schema.json refusal", err)
		}
		sts, err := client.AppsV1().StatefulSets(testNamespace).Get(ctx, "meshplane-core", metav1.GetOptions{})
		if err != nil || *sts.Spec.Replicas != 1 {
			t.Errorf("a refused install changed the core: %v %v", err, sts.Spec.Replicas)
		}
	})

	// The claim the StatefulSet controller makes from the core's template.
	mustCreate(t, func() error {
		_, err := client.CoreV1().PersistentVolumeClaims(testNamespace).Create(ctx, &corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Name: "data-meshplane-core-0", Labels: map[string]string{InstanceLabel: "meshplane"}},
			Spec: corev1.PersistentVolumeClaimSpec{
				AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
			},
		}, metav1.CreateOptions{})
		return err
	})

	t.Run("uninstall keeps the volumes", func(t *testing.T) {
		var out bytes.Buffer
		if err := Uninstall(ctx, lifecycleOptions(kubeconfig, outDir, &out)); err != nil {
			t.Fatalf("uninstall: %v\n%s", err, out.String())
		}
		for _, want := range []string{"release meshplane uninstalled", "kept PersistentVolumeClaim data-meshplane-core-0"} {
			if !strings.Contains(out.String(), want) {
				t.Errorf("uninstall output lacks %q:\n%s", want, out.String())
			}
		}
		if _, err := client.AppsV1().StatefulSets(testNamespace).Get(ctx, "meshplane-core", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("core StatefulSet after uninstall: %v, want NotFound", err)
		}
		if _, err := client.CoreV1().Secrets(testNamespace).Get(ctx, "meshplane-admin-kubeconfig", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("admin kubeconfig Secret after uninstall: %v, want NotFound", err)
		}
		if _, err := client.CoreV1().PersistentVolumeClaims(testNamespace).Get(ctx, "data-meshplane-core-0", metav1.GetOptions{}); err != nil {
			t.Errorf("volume claim after uninstall: %v, want kept", err)
		}
	})

	t.Run("uninstall again has nothing to do", func(t *testing.T) {
		var out bytes.Buffer
		if err := Uninstall(ctx, lifecycleOptions(kubeconfig, outDir, &out)); err != nil {
			t.Fatalf("second uninstall: %v", err)
		}
		if !strings.Contains(out.String(), "no release meshplane in namespace meshplane-system: nothing to uninstall") {
			t.Errorf("second uninstall output:\n%s", out.String())
		}
	})

	t.Run("uninstall --delete-volumes", func(t *testing.T) {
		var out bytes.Buffer
		o := lifecycleOptions(kubeconfig, outDir, &out)
		o.DeleteVolumes = true
		if err := Uninstall(ctx, o); err != nil {
			t.Fatalf("uninstall --delete-volumes: %v", err)
		}
		pvc, err := client.CoreV1().PersistentVolumeClaims(testNamespace).Get(ctx, "data-meshplane-core-0", metav1.GetOptions{})
		// Without a controller manager the pvc-protection finalizer stays: deleted means marked for deletion.
		if err == nil && pvc.DeletionTimestamp == nil {
			t.Errorf("volume claim not deleted:\n%s", out.String())
		} else if err != nil && !apierrors.IsNotFound(err) {
			t.Error(err)
		}
	})
}

func nodePort(t *testing.T, client kubernetes.Interface, name string) int32 {
	t.Helper()
	svc, err := client.CoreV1().Services(testNamespace).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if svc.Spec.Type != corev1.ServiceTypeNodePort || svc.Spec.Ports[0].NodePort == 0 {
		t.Fatalf("Service %s: type %s, ports %+v; want a NodePort", name, svc.Spec.Type, svc.Spec.Ports)
	}
	return svc.Spec.Ports[0].NodePort
}

func mustCreate(t *testing.T, create func() error) {
	t.Helper()
	if err := create(); err != nil {
		t.Fatal(err)
	}
}

// testEmbeddedCharts installs the charts the binary embeds: the API server
// accepts every object they render (Helm builds them against its OpenAPI
// schema), the install waits and names every component that never becomes
// ready (nothing runs pods here), and uninstall removes it all.
func testEmbeddedCharts(t *testing.T, kubeconfig string) {
	ctx := context.Background()
	var out bytes.Buffer
	o := NewOptions(charts.FS)
	o.Kubeconfig, o.OutputDir, o.Out = kubeconfig, t.TempDir(), &out
	o.Namespace, o.ReleaseName = "platform", "mp"
	o.Timeout = 10 * time.Second
	err := Install(ctx, o)
	if err == nil {
		t.Fatalf("install succeeded with no controller to make anything ready:\n%s", out.String())
	}
	for _, want := range []string{"not ready after 10s", "core 0/1: no pods", "openfga 0/1: no pods", "bootstrap 0/1: no pods"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("install error lacks %q:\n%v", want, err)
		}
	}
	t.Logf("install of the embedded charts:\n%s%v", out.String(), err)
	restCfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	client := kubernetes.NewForConfigOrDie(restCfg)
	if _, err := client.CoreV1().Secrets("platform").Get(ctx, "mp-admin-kubeconfig", metav1.GetOptions{}); err != nil {
		t.Errorf("admin kubeconfig Secret: %v", err)
	}

	// Without waiting, the install returns once the objects exist, and the
	// outputs come from the charts' own admin kubeconfig Secret.
	out.Reset()
	o.Wait, o.NodeAddress = false, "127.0.0.1"
	o.Set = []string{"core.service.type=NodePort"}
	if err := Install(ctx, o); err != nil {
		t.Fatalf("install --wait=false: %v\n%s", err, out.String())
	}
	svc, err := client.CoreV1().Services("platform").Get(ctx, "mp-core", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	port := svc.Spec.Ports[0].NodePort
	cfg, err := clientcmd.LoadFromFile(filepath.Join(o.OutputDir, AdminKubeconfigFile))
	if err != nil {
		t.Fatal(err)
	}
	for name, path := range map[string]string{"base": "", "root": "/clusters/root"} {
		cl := cfg.Clusters[name]
		if want := fmt.Sprintf("https://127.0.0.1:%d%s", port, path); cl == nil || cl.Server != want ||
			cl.TLSServerName != "mp-core.platform.svc.cluster.local" || len(cl.CertificateAuthorityData) == 0 {
			t.Errorf("admin kubeconfig cluster %s = %+v, want server %s, tls-server-name mp-core.platform.svc.cluster.local and the CA", name, cl, want)
		}
	}
	env, err := platformenv.Read(filepath.Join(o.OutputDir, platformenv.FileName))
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("https://127.0.0.1:%d", port); env["CORE_URL"] != want {
		t.Errorf("platform.env CORE_URL=%q, want %q", env["CORE_URL"], want)
	}
	t.Logf("install --wait=false of the embedded charts:\n%s", out.String())

	// ClusterIP (the charts' default): the in-cluster server stays, and the
	// way to reach it from here is printed.
	out.Reset()
	o.Set = nil
	if err := Install(ctx, o); err != nil {
		t.Fatalf("install: %v\n%s", err, out.String())
	}
	if cfg, err = clientcmd.LoadFromFile(filepath.Join(o.OutputDir, AdminKubeconfigFile)); err != nil {
		t.Fatal(err)
	}
	if cl := cfg.Clusters["base"]; cl == nil || cl.Server != "https://mp-core.platform.svc.cluster.local:6443" || cl.TLSServerName != "" {
		t.Errorf("admin kubeconfig base cluster with a ClusterIP core = %+v, want the in-cluster server unchanged", cl)
	}
	for _, want := range []string{"--port-forward", "kubectl -n platform port-forward svc/mp-core 6443:6443", "CORE_URL=https://mp-core.platform.svc.cluster.local:6443"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("install output with a ClusterIP core lacks %q:\n%s", want, out.String())
		}
	}
	t.Logf("install --wait=false, ClusterIP:\n%s", out.String())

	out.Reset()
	if err := Uninstall(ctx, o); err != nil {
		t.Fatalf("uninstall: %v\n%s", err, out.String())
	}
	if sts, err := client.AppsV1().StatefulSets("platform").List(ctx, metav1.ListOptions{}); err != nil || len(sts.Items) != 0 {
		t.Errorf("StatefulSets left after uninstall: %v %v", err, sts)
	}
}
