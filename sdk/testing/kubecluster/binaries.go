package kubecluster

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// The versions scripts/build-kubernetes.sh builds (tools/kubernetes/go.mod,
// tools/coredns/go.mod; TestVersionsMatchTools keeps them in step).
const (
	KubernetesVersion = "v1.34.4"
	CoreDNSVersion    = "v1.12.1"
)

type binaries struct {
	apiserver, controllerManager, scheduler, kubelet, kubeProxy, coredns string
	containerd, ctr                                                      string
}

// CacheDir is where scripts/build-kubernetes.sh puts what it builds:
// $MESHPLANE_CACHE, else $HOME/.cache/meshplane.
func CacheDir() string {
	if d := os.Getenv("MESHPLANE_CACHE"); d != "" {
		return d
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return filepath.Join(os.TempDir(), "meshplane-cache")
	}
	return filepath.Join(home, ".cache", "meshplane")
}

// findBinaries resolves each Kubernetes binary from its <NAME>_BIN variable
// (KUBE_APISERVER_BIN, KUBELET_BIN, COREDNS_BIN, ...), else from CacheDir,
// else runs scripts/build-kubernetes.sh once and takes them from CacheDir.
func (c *Cluster) findBinaries(ctx context.Context) error {
	k8s := filepath.Join(CacheDir(), "kubernetes", KubernetesVersion)
	dns := filepath.Join(CacheDir(), "coredns", CoreDNSVersion)
	want := []struct {
		name, dir string
		dst       *string
	}{
		{"kube-apiserver", k8s, &c.bin.apiserver},
		{"kube-controller-manager", k8s, &c.bin.controllerManager},
		{"kube-scheduler", k8s, &c.bin.scheduler},
		{"kubelet", k8s, &c.bin.kubelet},
		{"kube-proxy", k8s, &c.bin.kubeProxy},
		{"coredns", dns, &c.bin.coredns},
	}
	built := false
	for _, w := range want {
		env := strings.ToUpper(strings.ReplaceAll(w.name, "-", "_")) + "_BIN"
		if p := os.Getenv(env); p != "" {
			*w.dst = p
			continue
		}
		p := filepath.Join(w.dir, w.name)
		if _, err := os.Stat(p); err != nil && !built {
			if err := buildKubernetes(ctx, c.opts.Logf); err != nil {
				return err
			}
			built = true
		}
		if _, err := os.Stat(p); err != nil {
			return fmt.Errorf("%s: not at %s after scripts/build-kubernetes.sh", w.name, p)
		}
		*w.dst = p
	}
	var err error
	if c.bin.containerd, err = exec.LookPath("containerd"); err != nil {
		return err
	}
	c.bin.ctr, err = exec.LookPath("ctr")
	return err
}

// buildKubernetes runs scripts/build-kubernetes.sh of the repository holding
// the working directory.
func buildKubernetes(ctx context.Context, logf func(string, ...any)) error {
	root, err := repoRoot()
	if err != nil {
		return err
	}
	logf("kubecluster: building the Kubernetes binaries (scripts/build-kubernetes.sh; minutes when cold)")
	cmd := exec.CommandContext(ctx, filepath.Join(root, "scripts", "build-kubernetes.sh"))
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("scripts/build-kubernetes.sh: %w\n%s", err, out)
	}
	return nil
}

// repoRoot is the first directory up from the working directory that holds
// go.work.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.work")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.work above the working directory")
		}
		dir = parent
	}
}
