package kubecluster

import (
	"context"
	"fmt"
	"os"
	"os/exec"
)

// startKubeProxy runs kube-proxy in iptables mode so ClusterIP Services
// reach their pods; its health and metrics on 127.0.0.1, conntrack limits
// left as the host has them.
func (c *Cluster) startKubeProxy(context.Context) error {
	healthz, err := freePort()
	if err != nil {
		return err
	}
	metrics, err := freePort()
	if err != nil {
		return err
	}
	config := fmt.Sprintf(`apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection:
  kubeconfig: %s
mode: iptables
clusterCIDR: %s
hostnameOverride: %s
healthzBindAddress: 127.0.0.1:%d
metricsBindAddress: 127.0.0.1:%d
iptables:
  localhostNodePorts: false
conntrack:
  maxPerCore: 0
`, c.certs.kubeProxy, clusterCIDR, c.NodeName, healthz, metrics)
	file := c.path("kube-proxy.yaml")
	if err := os.WriteFile(file, []byte(config), 0o644); err != nil {
		return err
	}
	_, err = c.run("kube-proxy", c.bin.kubeProxy, "--config="+file, "--v=1")
	return err
}

// cleanUpKubeProxy removes kube-proxy's iptables chains (kube-proxy
// --cleanup) once it has stopped, and the filter table's KUBE-FIREWALL that
// --cleanup leaves (it is shared with the kubelet).
func (c *Cluster) cleanUpKubeProxy() error {
	if c.bin.kubeProxy == "" {
		return nil
	}
	out, err := exec.Command(c.bin.kubeProxy, "--cleanup").CombinedOutput()
	if err != nil {
		return fmt.Errorf("kube-proxy --cleanup: %v: %s", err, out)
	}
	for _, cmd := range []string{"iptables", "ip6tables"} {
		if exec.Command(cmd, "-w", "-n", "-L", "KUBE-FIREWALL").Run() != nil {
			continue
		}
		for _, args := range [][]string{
			{"-D", "INPUT", "-j", "KUBE-FIREWALL"}, {"-D", "OUTPUT", "-j", "KUBE-FIREWALL"},
			{"-F", "KUBE-FIREWALL"}, {"-X", "KUBE-FIREWALL"},
		} {
			_ = exec.Command(cmd, append([]string{"-w"}, args...)...).Run()
		}
	}
	return nil
}
