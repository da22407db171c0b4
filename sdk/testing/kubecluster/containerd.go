package kubecluster

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// criNamespace is the containerd namespace the CRI plugin keeps
// Kubernetes' images and containers in.
const criNamespace = "k8s.io"

// startContainerd runs Debian's containerd with a configuration of the
// kit's own: root, state and socket under Dir/containerd, the cgroupfs
// driver, runc, the CNI plugins of cniBinDir with the kit's bridge
// configuration, SandboxImage as the pause image, its streaming server on
// 127.0.0.1, OOM score adjustments never below its own.
func (c *Cluster) startContainerd(ctx context.Context) error {
	dir := c.path("containerd")
	if err := os.MkdirAll(dir, 0o711); err != nil {
		return err
	}
	c.ContainerdAddress = dir + "/containerd.sock"
	config := fmt.Sprintf(`version = 2
root = %q
state = %q

[grpc]
  address = %q

[plugins."io.containerd.internal.v1.opt"]
  path = %q

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = %q
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  enable_selinux = false
  # Never below containerd's own oom_score_adj: lowering it needs
  # CAP_SYS_RESOURCE, which this kind of machine does not grant (runc fails
  # on the sandbox's -998 otherwise).
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = %q
    conf_dir = %q
    max_conf_num = 1
`, dir+"/root", dir+"/state", c.ContainerdAddress, dir+"/opt", c.opts.SandboxImage, cniBinDir, c.path("cni", "net.d"))
	configFile := dir + "/config.toml"
	if err := os.WriteFile(configFile, []byte(config), 0o644); err != nil {
		return err
	}
	np, err := c.run("containerd", c.bin.containerd, "--config", configFile)
	if err != nil {
		return err
	}
	return poll(ctx, "containerd serving", time.Minute, np, func(ctx context.Context) (bool, string, error) {
		out, err := c.ctr(ctx, "version")
		if err != nil {
			return false, out, nil
		}
		return true, "", nil
	})
}

// importImages imports Options.Images.
func (c *Cluster) importImages(ctx context.Context) error {
	for _, archive := range c.opts.Images {
		if err := c.ImportImage(ctx, archive); err != nil {
			return err
		}
	}
	return nil
}

// ImportImage imports an OCI image archive into containerd's k8s.io
// namespace (ctr images import), where the kubelet finds it; the image's
// name is the archive's io.containerd.image.name (or
// org.opencontainers.image.ref.name) annotation.
func (c *Cluster) ImportImage(ctx context.Context, ociArchivePath string) error {
	out, err := c.ctr(ctx, "images", "import", ociArchivePath)
	if err != nil {
		return fmt.Errorf("importing %s: %w: %s", ociArchivePath, err, out)
	}
	c.opts.Logf("kubecluster: imported %s: %s", ociArchivePath, strings.TrimSpace(out))
	return nil
}

func (c *Cluster) ctr(ctx context.Context, args ...string) (string, error) {
	args = append([]string{"--address", c.ContainerdAddress, "--namespace", criNamespace}, args...)
	out, err := exec.CommandContext(ctx, c.bin.ctr, args...).CombinedOutput()
	return string(out), err
}

// removeSandboxes stops and removes every pod sandbox through containerd's
// CRI service: their containers are killed, their network torn down by the
// CNI plugins (veth, addresses, masquerade rules), their namespaces unmounted.
func (c *Cluster) removeSandboxes(ctx context.Context) error {
	conn, err := grpc.NewClient("unix://"+c.ContainerdAddress, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer conn.Close()
	rt := runtimeapi.NewRuntimeServiceClient(conn)
	list, err := rt.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{})
	if err != nil {
		return err
	}
	var errs []string
	for _, s := range list.Items {
		if _, err := rt.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: s.Id}); err != nil {
			errs = append(errs, err.Error())
			continue
		}
		if _, err := rt.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: s.Id}); err != nil {
			errs = append(errs, err.Error())
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("removing pod sandboxes: %s", strings.Join(errs, "; "))
	}
	return nil
}
