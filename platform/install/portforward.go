package install

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/portforward"
	"k8s.io/client-go/transport/spdy"
)

// forwarder keeps local ports forwarded to pods through the Kubernetes API
// (what `kubectl port-forward svc/...` does) while the command runs: the
// --port-forward way to reach ClusterIP Services from this machine.
type forwarder struct {
	rest   *rest.Config
	client kubernetes.Interface

	mu    sync.Mutex
	stops []chan struct{}
	// local is the forwarded address by namespace/service:port.
	local map[string]string
}

// forward opens 127.0.0.1:<random port> to port of a Ready pod behind svc.
func (f *forwarder) forward(ctx context.Context, svc *corev1.Service, port corev1.ServicePort) (string, error) {
	key := fmt.Sprintf("%s/%s:%d", svc.Namespace, svc.Name, port.Port)
	f.mu.Lock()
	addr, ok := f.local[key]
	f.mu.Unlock()
	if ok {
		return addr, nil
	}
	pod, err := readyPod(ctx, f.client, svc)
	if err != nil {
		return "", err
	}
	target, err := targetPort(pod, port)
	if err != nil {
		return "", err
	}
	transport, upgrader, err := spdy.RoundTripperFor(f.rest)
	if err != nil {
		return "", err
	}
	u := f.client.CoreV1().RESTClient().Post().Resource("pods").Namespace(pod.Namespace).Name(pod.Name).SubResource("portforward").URL()
	dialer := spdy.NewDialer(upgrader, &http.Client{Transport: transport}, http.MethodPost, u)
	stop, ready := make(chan struct{}), make(chan struct{})
	fw, err := portforward.NewOnAddresses(dialer, []string{"127.0.0.1"}, []string{"0:" + strconv.Itoa(target)}, stop, ready, io.Discard, io.Discard)
	if err != nil {
		return "", err
	}
	failed := make(chan error, 1)
	go func() { failed <- fw.ForwardPorts() }()
	select {
	case <-ready:
	case err := <-failed:
		return "", fmt.Errorf("port-forward to pod %s/%s port %d: %v", pod.Namespace, pod.Name, target, err)
	case <-ctx.Done():
		close(stop)
		return "", ctx.Err()
	}
	ports, err := fw.GetPorts()
	if err != nil || len(ports) == 0 {
		close(stop)
		return "", fmt.Errorf("port-forward to pod %s/%s: no local port (%v)", pod.Namespace, pod.Name, err)
	}
	addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(int(ports[0].Local)))
	f.mu.Lock()
	defer f.mu.Unlock()
	f.stops = append(f.stops, stop)
	if f.local == nil {
		f.local = map[string]string{}
	}
	f.local[key] = addr
	return addr, nil
}

// stop ends every forward.
func (f *forwarder) stop() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, s := range f.stops {
		close(s)
	}
	f.stops, f.local = nil, nil
}

// active says whether any port is forwarded.
func (f *forwarder) active() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.stops) > 0
}

// readyPod is a Running, Ready pod the Service selects.
func readyPod(ctx context.Context, client kubernetes.Interface, svc *corev1.Service) (*corev1.Pod, error) {
	if len(svc.Spec.Selector) == 0 {
		return nil, fmt.Errorf("Service %s/%s selects no pods to forward to", svc.Namespace, svc.Name)
	}
	pods, err := client.CoreV1().Pods(svc.Namespace).List(ctx, metav1.ListOptions{LabelSelector: labels.SelectorFromSet(svc.Spec.Selector).String()})
	if err != nil {
		return nil, err
	}
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.Status.Phase != corev1.PodRunning || p.DeletionTimestamp != nil {
			continue
		}
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
				return p, nil
			}
		}
	}
	return nil, fmt.Errorf("Service %s/%s: no Ready pod to forward to", svc.Namespace, svc.Name)
}

// targetPort is the container port the Service port sends to on pod: its
// number, or the container port of that name.
func targetPort(pod *corev1.Pod, port corev1.ServicePort) (int, error) {
	switch {
	case port.TargetPort.Type == intstr.Int && port.TargetPort.IntVal != 0:
		return int(port.TargetPort.IntVal), nil
	case port.TargetPort.Type == intstr.String && port.TargetPort.StrVal != "":
		for _, c := range pod.Spec.Containers {
			for _, cp := range c.Ports {
				if cp.Name == port.TargetPort.StrVal {
					return int(cp.ContainerPort), nil
				}
			}
		}
		return 0, fmt.Errorf("pod %s/%s has no container port %q", pod.Namespace, pod.Name, port.TargetPort.StrVal)
	}
	return int(port.Port), nil
}
