package kubecluster

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

// startDNS runs CoreDNS (tools/coredns) as a host process on NodeIP:53
// with its own read-only identity, and points the kube-dns Service
// (DNSServiceIP, the kubelet's clusterDNS) at it through an EndpointSlice
// of the kit's: pods resolve <svc>.<ns>.svc.cluster.local through
// kube-proxy as in any cluster; other names go to the host's resolver.
func (c *Cluster) startDNS(ctx context.Context) error {
	if err := c.grantDNS(ctx); err != nil {
		return err
	}
	ready, err := freePort()
	if err != nil {
		return err
	}
	health, err := freePort()
	if err != nil {
		return err
	}
	corefile := fmt.Sprintf(`.:53 {
    bind %s
    errors
    health 127.0.0.1:%d
    ready 127.0.0.1:%d
    kubernetes %s in-addr.arpa ip6.arpa {
        kubeconfig %s
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
    }
    forward . %s
    cache 30
}
`, NodeIP, health, ready, ClusterDomain, c.certs.coredns, c.path("kubelet", "resolv.conf"))
	file := c.path("Corefile")
	if err := os.WriteFile(file, []byte(corefile), 0o644); err != nil {
		return err
	}
	np, err := c.run("coredns", c.bin.coredns, "-conf", file)
	if err != nil {
		return err
	}
	if err := c.exposeDNS(ctx); err != nil {
		return err
	}
	url := fmt.Sprintf("http://127.0.0.1:%d/ready", ready)
	client := &http.Client{Timeout: 2 * time.Second}
	return poll(ctx, "coredns ready", time.Minute, np, func(ctx context.Context) (bool, string, error) {
		resp, err := client.Get(url)
		if err != nil {
			return false, err.Error(), nil
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, resp.Status, nil
	})
}

// Resolver resolves names through the cluster DNS from this host
// (<svc>.<ns>.svc.cluster.local); with kube-proxy's rules, ClusterIPs and pod
// addresses are reachable from the host too.
func (c *Cluster) Resolver() *net.Resolver {
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, net.JoinHostPort(NodeIP, "53"))
	}}
}

// grantDNS lets CoreDNS's identity read what the kubernetes plugin watches.
func (c *Cluster) grantDNS(ctx context.Context) error {
	role := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "kubecluster:coredns"},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"services", "pods", "namespaces"}, Verbs: []string{"list", "watch"}},
			{APIGroups: []string{"discovery.k8s.io"}, Resources: []string{"endpointslices"}, Verbs: []string{"list", "watch"}},
		},
	}
	if _, err := c.client.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil {
		return err
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "kubecluster:coredns"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "kubecluster:coredns"}},
	}
	_, err := c.client.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{})
	return err
}

// exposeDNS creates kube-system/kube-dns on DNSServiceIP, its endpoint
// CoreDNS on NodeIP.
func (c *Cluster) exposeDNS(ctx context.Context) error {
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "kube-dns", Namespace: metav1.NamespaceSystem,
			Labels: map[string]string{"k8s-app": "kube-dns"}},
		Spec: corev1.ServiceSpec{
			ClusterIP: DNSServiceIP,
			Ports: []corev1.ServicePort{
				{Name: "dns", Protocol: corev1.ProtocolUDP, Port: 53, TargetPort: intstr.FromInt32(53)},
				{Name: "dns-tcp", Protocol: corev1.ProtocolTCP, Port: 53, TargetPort: intstr.FromInt32(53)},
			},
		},
	}
	if _, err := c.client.CoreV1().Services(svc.Namespace).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		return err
	}
	udp, tcp := corev1.ProtocolUDP, corev1.ProtocolTCP
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Name: "kube-dns-kubecluster", Namespace: metav1.NamespaceSystem,
			Labels: map[string]string{
				discoveryv1.LabelServiceName: "kube-dns",
				discoveryv1.LabelManagedBy:   "kubecluster.meshplane.io",
			}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints: []discoveryv1.Endpoint{{
			Addresses:  []string{NodeIP},
			Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)},
			NodeName:   ptr.To(c.NodeName),
		}},
		Ports: []discoveryv1.EndpointPort{
			{Name: ptr.To("dns"), Protocol: &udp, Port: ptr.To[int32](53)},
			{Name: ptr.To("dns-tcp"), Protocol: &tcp, Port: ptr.To[int32](53)},
		},
	}
	_, err := c.client.DiscoveryV1().EndpointSlices(slice.Namespace).Create(ctx, slice, metav1.CreateOptions{})
	if err != nil && strings.Contains(err.Error(), "already exists") {
		return nil
	}
	return err
}
