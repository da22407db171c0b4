package install

import (
	"bytes"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

func TestDeploymentState(t *testing.T) {
	d := func(gen, observed int64, want int32, st appsv1.DeploymentStatus) *appsv1.Deployment {
		st.ObservedGeneration = observed
		return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Generation: gen}, Spec: appsv1.DeploymentSpec{Replicas: ptr.To(want)}, Status: st}
	}
	for _, tc := range []struct {
		name string
		in   *appsv1.Deployment
		want state
	}{
		{"new", d(1, 0, 1, appsv1.DeploymentStatus{}), state{Text: "0/1"}},
		{"ready", d(1, 1, 2, appsv1.DeploymentStatus{Replicas: 2, UpdatedReplicas: 2, ReadyReplicas: 2, AvailableReplicas: 2}), state{Ready: true, Text: "2/2"}},
		{"spec not seen yet", d(2, 1, 1, appsv1.DeploymentStatus{Replicas: 1, UpdatedReplicas: 1, ReadyReplicas: 1, AvailableReplicas: 1}), state{Text: "1/1"}},
		{"rolling", d(2, 2, 2, appsv1.DeploymentStatus{Replicas: 3, UpdatedReplicas: 1, ReadyReplicas: 2, AvailableReplicas: 2}), state{Text: "2/2, 1 updated"}},
	} {
		if got := deploymentState(tc.in); got != tc.want {
			t.Errorf("%s: deploymentState = %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

func TestStatefulSetState(t *testing.T) {
	s := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Generation: 3}, Spec: appsv1.StatefulSetSpec{Replicas: ptr.To[int32](1)},
		Status: appsv1.StatefulSetStatus{ObservedGeneration: 3, Replicas: 1, ReadyReplicas: 1, UpdatedReplicas: 0}}
	if got := statefulSetState(s); got.Ready || got.Text != "1/1, 0 updated" {
		t.Errorf("old revision running: %+v, want not ready, \"1/1, 0 updated\"", got)
	}
	s.Status.UpdatedReplicas = 1
	if got := statefulSetState(s); !got.Ready || got.Text != "1/1" {
		t.Errorf("updated and ready: %+v, want ready \"1/1\"", got)
	}
}

func TestJobState(t *testing.T) {
	cond := func(ty batchv1.JobConditionType, reason string) batchv1.JobStatus {
		return batchv1.JobStatus{Conditions: []batchv1.JobCondition{{Type: ty, Status: corev1.ConditionTrue, Reason: reason}}}
	}
	for _, tc := range []struct {
		st   batchv1.JobStatus
		want state
	}{
		{batchv1.JobStatus{}, state{Text: "pending"}},
		{batchv1.JobStatus{Active: 1}, state{Text: "running"}},
		{cond(batchv1.JobComplete, ""), state{Ready: true, Text: "complete"}},
		{cond(batchv1.JobFailed, "BackoffLimitExceeded"), state{Failed: true, Text: "failed: BackoffLimitExceeded"}},
	} {
		if got := jobState(&batchv1.Job{Status: tc.st}); got != tc.want {
			t.Errorf("jobState(%+v) = %+v, want %+v", tc.st, got, tc.want)
		}
	}
}

// One line per change, the elapsed time once a component is ready.
func TestProgressLines(t *testing.T) {
	var out bytes.Buffer
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	p := newProgress(&out, "meshplane", start)
	now := start
	p.now = func() time.Time { return now }
	coreLabels := labels.Set{"app.kubernetes.io/name": "core"}
	core := workload{Kind: "StatefulSet", Name: "meshplane-core", Selector: labels.SelectorFromSet(coreLabels)}
	boot := workload{Kind: "Job", Name: "meshplane-bootstrap", Selector: labels.Nothing()}

	core.State = state{Text: "0/1"}
	p.observe(core)
	p.observe(core) // unchanged: no line
	p.observePod("meshplane-core-0", &pod{labels: coreLabels, reason: "ContainerCreating"})
	p.observePod("meshplane-core-0", &pod{labels: coreLabels, reason: "ContainerCreating"}) // unchanged
	p.observePod("meshplane-core-0", &pod{labels: coreLabels, reason: "CrashLoopBackOff"})
	p.observePod("other", &pod{labels: labels.Set{"app.kubernetes.io/name": "gateway"}, reason: "Error"}) // not core's
	now = start.Add(12 * time.Second)
	core.State = state{Ready: true, Text: "1/1"}
	p.observe(core)
	boot.State = state{Text: "running"}
	p.observe(boot)
	now = start.Add(20*time.Second + 400*time.Millisecond)
	boot.State = state{Ready: true, Text: "complete"}
	p.observe(boot)

	want := strings.Join([]string{
		"core 0/1",
		"core 0/1 (ContainerCreating)",
		"core 0/1 (CrashLoopBackOff)",
		"core 1/1 ready (12s)",
		"bootstrap (job) running",
		"bootstrap (job) complete (20s)",
	}, "\n") + "\n"
	if out.String() != want {
		t.Errorf("progress lines:\n%s\nwant:\n%s", out.String(), want)
	}
	if nr := p.notReady(); len(nr) != 0 {
		t.Errorf("notReady = %v, want none", nr)
	}
}

func TestServiceOfHost(t *testing.T) {
	for _, tc := range []struct{ host, name, ns string }{
		{"meshplane-core.meshplane-system.svc", "meshplane-core", "meshplane-system"},
		{"meshplane-core.meshplane-system.svc.cluster.local", "meshplane-core", "meshplane-system"},
		{"meshplane-core.other", "meshplane-core", "other"},
		{"meshplane-core", "meshplane-core", "default-ns"},
		{"10.0.0.1", "", ""},
		{"platform.example.com", "", ""},
	} {
		name, ns := serviceOfHost(tc.host, "default-ns")
		if name != tc.name || ns != tc.ns {
			t.Errorf("serviceOfHost(%q) = %q, %q; want %q, %q", tc.host, name, ns, tc.name, tc.ns)
		}
	}
}

func TestTargetPort(t *testing.T) {
	pod := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{
		{Name: "core", Ports: []corev1.ContainerPort{{Name: "https", ContainerPort: 6443}, {Name: "metrics", ContainerPort: 9090}}},
	}}}
	for _, tc := range []struct {
		port    corev1.ServicePort
		want    int
		wantErr bool
	}{
		{corev1.ServicePort{Port: 443, TargetPort: intstr.FromString("https")}, 6443, false},
		{corev1.ServicePort{Port: 80, TargetPort: intstr.FromInt32(8080)}, 8080, false},
		{corev1.ServicePort{Port: 8443}, 8443, false},
		{corev1.ServicePort{Port: 443, TargetPort: intstr.FromString("grpc")}, 0, true},
	} {
		got, err := targetPort(pod, tc.port)
		if got != tc.want || (err != nil) != tc.wantErr {
			t.Errorf("targetPort(%+v) = %d, %v; want %d (error: %v)", tc.port, got, err, tc.want, tc.wantErr)
		}
	}
}

func TestPodReason(t *testing.T) {
	for _, tc := range []struct {
		status corev1.PodStatus
		want   string
	}{
		{corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable"}}}, "Unschedulable"},
		{corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff"}}}}}, "ImagePullBackOff"},
		{corev1.PodStatus{InitContainerStatuses: []corev1.ContainerStatus{{State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Error"}}}}}, "Error"},
		{corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{Ready: true}}}, ""},
	} {
		if got := podReason(&corev1.Pod{Status: tc.status}); got != tc.want {
			t.Errorf("podReason(%+v) = %q, want %q", tc.status, got, tc.want)
		}
	}
}
