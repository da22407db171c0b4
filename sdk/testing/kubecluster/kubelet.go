package kubecluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// cgroupRoot is the cgroup the kubelet puts every pod under (cgroupfs
// driver), in each v1 hierarchy; Stop removes it.
const cgroupRoot = "/meshplane-kubecluster"

// startKubelet runs the kubelet against containerd's CRI: node identity
// system:node:<name>, serving on NodeIP with a certificate of the kit's CA,
// clients authenticated by that CA and authorized by the API server, its
// root, pod logs and resolv.conf under Dir. failCgroupV1 is false: this
// kind of host mounts the v1 hierarchy. Image garbage collection is off
// (nothing can be pulled back) and eviction thresholds are minimal (a shared
// test machine's disk and memory are not the cluster's to guard).
func (c *Cluster) startKubelet(context.Context) error {
	dir := c.path("kubelet")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	port, err := freePort()
	if err != nil {
		return err
	}
	healthz, err := freePort()
	if err != nil {
		return err
	}
	if err := createCgroupRoot(); err != nil {
		return err
	}
	resolv, err := hostResolvConf()
	if err != nil {
		return err
	}
	resolvFile := dir + "/resolv.conf"
	if err := os.WriteFile(resolvFile, []byte(resolv), 0o644); err != nil {
		return err
	}
	config := fmt.Sprintf(`apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: %s
port: %d
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: %d
tlsCertFile: %s
tlsPrivateKeyFile: %s
authentication:
  anonymous:
    enabled: false
  webhook:
    enabled: true
  x509:
    clientCAFile: %s
authorization:
  mode: Webhook
cgroupDriver: cgroupfs
cgroupRoot: %s
failCgroupV1: false
failSwapOn: false
containerRuntimeEndpoint: unix://%s
clusterDNS: [%s]
clusterDomain: %s
resolvConf: %s
podLogsDir: %s
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard:
  memory.available: 50Mi
  nodefs.available: 1%%
  nodefs.inodesFree: 1%%
  imagefs.available: 1%%
serializeImagePulls: false
rotateCertificates: false
serverTLSBootstrap: false
protectKernelDefaults: false
makeIPTablesUtilChains: false
`, NodeIP, port, healthz, c.certs.kubeletServer.CertFile, c.certs.kubeletServer.KeyFile, c.certs.ca.CertFile,
		cgroupRoot, c.ContainerdAddress, DNSServiceIP, ClusterDomain, resolvFile, c.path("pod-logs"))
	configFile := dir + "/config.yaml"
	if err := os.WriteFile(configFile, []byte(config), 0o644); err != nil {
		return err
	}
	_, err = c.run("kubelet", c.bin.kubelet,
		"--config="+configFile,
		"--kubeconfig="+c.certs.kubelet,
		"--root-dir="+dir+"/root",
		"--cert-dir="+dir+"/pki",
		"--hostname-override="+c.NodeName,
		"--node-ip="+NodeIP,
		"--v=1",
	)
	return err
}

// createCgroupRoot creates cgroupRoot in every mounted hierarchy (the
// kubelet refuses a root that does not exist), with the cpuset of the
// host's root (a new v1 cpuset starts empty).
func createCgroupRoot() error {
	hierarchies, err := filepath.Glob("/sys/fs/cgroup/*")
	if err != nil {
		return err
	}
	if exists("/sys/fs/cgroup/cgroup.controllers") { // v2 alone
		hierarchies = []string{"/sys/fs/cgroup"}
	}
	for _, h := range hierarchies {
		if !exists(h + "/cgroup.procs") {
			continue
		}
		if err := os.MkdirAll(h+cgroupRoot, 0o755); err != nil {
			return err
		}
		for _, f := range []string{"cpuset.cpus", "cpuset.mems"} {
			if b, err := os.ReadFile(h + "/" + f); err == nil && filepath.Base(h) == "cpuset" {
				if err := os.WriteFile(h+cgroupRoot+"/"+f, b, 0o644); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// hostResolvConf is the host's resolv.conf minus loopback nameservers
// (unreachable from a pod), the upstream of the cluster DNS and of pods with
// dnsPolicy Default.
func hostResolvConf() (string, error) {
	b, err := os.ReadFile("/etc/resolv.conf")
	if err != nil {
		return "", err
	}
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 && f[0] == "nameserver" && strings.HasPrefix(f[1], "127.") {
			continue
		}
		out = append(out, line)
	}
	return strings.Join(out, "\n"), nil
}

// waitNodeReady waits for the node to register and report Ready, and for
// the default namespace's ServiceAccount (pods are refused until the
// controller-manager has created it).
func (c *Cluster) waitNodeReady(ctx context.Context) error {
	var kubelet *namedProcess
	for _, p := range c.procs {
		if p.name == "kubelet" {
			kubelet = p
		}
	}
	err := poll(ctx, "node Ready", 3*time.Minute, kubelet, func(ctx context.Context) (bool, string, error) {
		n, err := c.client.CoreV1().Nodes().Get(ctx, c.NodeName, metav1.GetOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		for _, cond := range n.Status.Conditions {
			if cond.Type == corev1.NodeReady {
				return cond.Status == corev1.ConditionTrue, string(cond.Status) + ": " + cond.Reason + ": " + cond.Message, nil
			}
		}
		return false, "no Ready condition yet", nil
	})
	if err != nil {
		return err
	}
	return poll(ctx, "default ServiceAccount", time.Minute, nil, func(ctx context.Context) (bool, string, error) {
		_, err := c.client.CoreV1().ServiceAccounts(metav1.NamespaceDefault).Get(ctx, "default", metav1.GetOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		return true, "", nil
	})
}
