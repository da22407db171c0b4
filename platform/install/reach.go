package install

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// How a URL reaches a Service from this machine.
const (
	viaLoadBalancer = "LoadBalancer"
	viaNodePort     = "NodePort"
	viaClusterIP    = "ClusterIP" // in-cluster only: needs kubectl port-forward from outside
	viaPortForward  = "port-forward"
)

// endpoint is a Service port as reached from this machine.
type endpoint struct {
	HostPort string // host:port
	Via      string
	// Forward is the port-forward command that reaches a ClusterIP port.
	Forward string
}

// reach finds how to reach port of svc from outside the cluster: the load
// balancer's address when it has one (the address meant for clients), else
// a node's address and the NodePort (type NodePort, or a LoadBalancer still
// waiting for its address), else (ClusterIP: only pods and nodes reach it)
// a local port forwarded through the API server when fw is set, or the
// in-cluster name and the port-forward command to run.
func reach(ctx context.Context, client kubernetes.Interface, svc *corev1.Service, port corev1.ServicePort, nodeAddress string, fw *forwarder) (endpoint, error) {
	if svc.Spec.Type == corev1.ServiceTypeLoadBalancer {
		for _, in := range svc.Status.LoadBalancer.Ingress {
			host := in.IP
			if host == "" {
				host = in.Hostname
			}
			if host != "" {
				return endpoint{HostPort: net.JoinHostPort(host, strconv.Itoa(int(port.Port))), Via: viaLoadBalancer}, nil
			}
		}
	}
	if port.NodePort != 0 && (svc.Spec.Type == corev1.ServiceTypeNodePort || svc.Spec.Type == corev1.ServiceTypeLoadBalancer) {
		addr := nodeAddress
		if addr == "" {
			var err error
			if addr, err = readyNodeAddress(ctx, client); err != nil {
				return endpoint{}, err
			}
		}
		return endpoint{HostPort: net.JoinHostPort(addr, strconv.Itoa(int(port.NodePort))), Via: viaNodePort}, nil
	}
	if fw != nil {
		hostPort, err := fw.forward(ctx, svc, port)
		if err != nil {
			return endpoint{}, err
		}
		return endpoint{HostPort: hostPort, Via: viaPortForward}, nil
	}
	return endpoint{
		HostPort: net.JoinHostPort(fmt.Sprintf("%s.%s.svc", svc.Name, svc.Namespace), strconv.Itoa(int(port.Port))),
		Via:      viaClusterIP,
		Forward:  fmt.Sprintf("kubectl -n %s port-forward svc/%s %d:%d", svc.Namespace, svc.Name, port.Port, port.Port),
	}, nil
}

// readyNodeAddress is a Ready node's ExternalIP, else its InternalIP.
func readyNodeAddress(ctx context.Context, client kubernetes.Interface) (string, error) {
	nodes, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return "", fmt.Errorf("listing nodes for a NodePort address (or give --node-address): %w", err)
	}
	var internal string
	for _, n := range nodes.Items {
		if !nodeReady(&n) {
			continue
		}
		for _, a := range n.Status.Addresses {
			switch a.Type {
			case corev1.NodeExternalIP:
				return a.Address, nil
			case corev1.NodeInternalIP:
				if internal == "" {
					internal = a.Address
				}
			}
		}
	}
	if internal == "" {
		return "", fmt.Errorf("no Ready node with an address for the NodePort URLs (give --node-address)")
	}
	return internal, nil
}

func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// serviceOfHost names the Service behind an in-cluster host name
// (<svc>.<ns>.svc[.<cluster domain>] or <svc>.<ns>), or "" when host is not one.
func serviceOfHost(host, defaultNamespace string) (name, namespace string) {
	if net.ParseIP(host) != nil || host == "localhost" {
		return "", ""
	}
	parts := strings.Split(host, ".")
	switch {
	case len(parts) >= 3 && parts[2] == "svc":
		return parts[0], parts[1]
	case len(parts) == 2:
		return parts[0], parts[1]
	case len(parts) == 1:
		return parts[0], defaultNamespace
	}
	return "", ""
}

// servicePort picks the port named name, or the one numbered port, or the
// only one.
func servicePort(svc *corev1.Service, name string, port int) (corev1.ServicePort, bool) {
	for _, p := range svc.Spec.Ports {
		if (name != "" && p.Name == name) || (port != 0 && int(p.Port) == port) {
			return p, true
		}
	}
	if name == "" && port == 0 && len(svc.Spec.Ports) > 0 {
		return svc.Spec.Ports[0], true
	}
	return corev1.ServicePort{}, false
}
