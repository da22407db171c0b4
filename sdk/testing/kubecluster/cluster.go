package kubecluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/meshplane/meshplane/sdk/process"
)

// The cluster's fixed network: one cluster runs on a host at a time (see
// hostLock), so these never collide.
const (
	// NodeIP is the node's address: the bridge the pods hang off. The API
	// server, the kubelet and the cluster DNS listen on it.
	NodeIP       = "10.244.0.1"
	podSubnet    = "10.244.0.0/24"
	clusterCIDR  = "10.244.0.0/16"
	serviceCIDR  = "10.96.0.0/16"
	DNSServiceIP = "10.96.0.10"
	// NodeBridge is the bridge holding NodeIP, the pods' network.
	NodeBridge = "mpkube0"
	// ClusterDomain is the DNS domain of Services: <svc>.<ns>.svc.cluster.local.
	ClusterDomain = "cluster.local"
	// DefaultNodeName is the node's name unless Options.NodeName says otherwise.
	DefaultNodeName = "meshplane-node"
	// PauseImageRepository is the repository of the pause image `make images`
	// writes (bin/images/pause.tar); its tag is the VERSION file's.
	PauseImageRepository = "ghcr.io/meshplane/pause"
	// StorageClassName is the default StorageClass; its volumes are
	// directories under Options.Dir.
	StorageClassName = "meshplane-hostpath"
)

// Options of Start.
type Options struct {
	// Dir holds all the cluster's state (required); Stop leaves it in place
	// (logs under Dir/logs) with nothing mounted.
	Dir string
	// NodeName is the node's name; DefaultNodeName if empty.
	NodeName string
	// SandboxImage is containerd's sandbox (pause) image reference; if
	// empty, `make images`' pause image: PauseImageRepository tagged with the
	// repository's VERSION file.
	SandboxImage string
	// Images are OCI archives imported into containerd before the kubelet
	// starts; the sandbox image among them.
	Images []string
	// Logf, if set, reports each step (t.Logf).
	Logf func(format string, args ...any)
}

// Cluster is a running single-node cluster.
type Cluster struct {
	// Kubeconfig is the path of an admin (system:masters) kubeconfig.
	Kubeconfig string
	// ContainerdAddress is containerd's socket (for ctr --address).
	ContainerdAddress string
	// Dir is Options.Dir.
	Dir string
	// NodeName is the node's name.
	NodeName string
	// Timings of Start: each step's duration, for docs and benchmarks.
	Timings []Timing

	opts       Options
	bin        binaries
	certs      *certs
	etcd       *embed.Etcd
	procs      []*namedProcess
	client     kubernetes.Interface
	restConfig *rest.Config
	provCancel context.CancelFunc
	provDone   chan struct{}
	unlock     func()
	bridgeUp   bool
}

// Timing is how long one step of Start took.
type Timing struct {
	Step     string
	Duration time.Duration
}

type namedProcess struct {
	name string
	p    *process.Process
	log  *os.File
}

// PrerequisiteError says what this machine lacks to run a cluster (root, a
// Debian package, cgroups); tests skip on it with its message.
type PrerequisiteError struct{ Missing string }

func (e *PrerequisiteError) Error() string {
	return "kubecluster: this machine lacks " + e.Missing
}

// IsPrerequisite reports whether err is a *PrerequisiteError.
func IsPrerequisite(err error) bool {
	var pe *PrerequisiteError
	return errors.As(err, &pe)
}

// Start starts a cluster under opts.Dir and returns once the node is Ready,
// CoreDNS answers and the default StorageClass exists. On error everything
// started so far is stopped again.
func Start(ctx context.Context, opts Options) (c *Cluster, err error) {
	if opts.Dir == "" {
		return nil, errors.New("kubecluster: Options.Dir is required")
	}
	dir, err := filepath.Abs(opts.Dir)
	if err != nil {
		return nil, err
	}
	opts.Dir = dir
	if opts.NodeName == "" {
		opts.NodeName = DefaultNodeName
	}
	if opts.SandboxImage == "" {
		if opts.SandboxImage, err = defaultSandboxImage(); err != nil {
			return nil, err
		}
	}
	if opts.Logf == nil {
		opts.Logf = func(string, ...any) {}
	}
	if err := checkPrerequisites(); err != nil {
		return nil, err
	}
	c = &Cluster{Dir: dir, NodeName: opts.NodeName, opts: opts}
	defer func() {
		if err != nil {
			c.Stop()
			c = nil
		}
	}()
	steps := []struct {
		name string
		run  func(context.Context) error
	}{
		{"host lock", c.lockHost},
		{"binaries", c.findBinaries},
		{"certificates", c.writeCerts},
		{"network", c.setUpNetwork},
		{"etcd", c.startEtcd},
		{"kube-apiserver", c.startAPIServer},
		{"controller-manager and scheduler", c.startControllers},
		{"containerd", c.startContainerd},
		{"images", c.importImages},
		{"kubelet", c.startKubelet},
		{"kube-proxy", c.startKubeProxy},
		{"dns", c.startDNS},
		{"storage", c.startStorage},
		{"node ready", c.waitNodeReady},
	}
	for _, s := range steps {
		start := time.Now()
		if err := s.run(ctx); err != nil {
			return c, fmt.Errorf("kubecluster: %s: %w", s.name, err)
		}
		d := time.Since(start)
		c.Timings = append(c.Timings, Timing{Step: s.name, Duration: d})
		opts.Logf("kubecluster: %s: %s", s.name, d.Round(time.Millisecond))
	}
	return c, nil
}

// Client is an admin clientset of the cluster.
func (c *Cluster) Client() kubernetes.Interface { return c.client }

// RESTConfig is the admin REST config of the cluster (a copy).
func (c *Cluster) RESTConfig() *rest.Config { return rest.CopyConfig(c.restConfig) }

// defaultSandboxImage is PauseImageRepository:<VERSION file>.
func defaultSandboxImage() (string, error) {
	root, err := repoRoot()
	if err != nil {
		return "", err
	}
	v, err := os.ReadFile(filepath.Join(root, "VERSION"))
	if err != nil {
		return "", fmt.Errorf("kubecluster: no Options.SandboxImage and no VERSION file for the pause image's tag: %w", err)
	}
	return PauseImageRepository + ":" + strings.TrimSpace(string(v)), nil
}

func (c *Cluster) path(elem ...string) string {
	return filepath.Join(append([]string{c.Dir}, elem...)...)
}

func (c *Cluster) loadClient() error {
	cfg, err := clientcmd.BuildConfigFromFlags("", c.Kubeconfig)
	if err != nil {
		return err
	}
	cfg.QPS, cfg.Burst = 50, 100
	c.restConfig = cfg
	c.client, err = kubernetes.NewForConfig(cfg)
	return err
}
