package install

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"

	"k8s.io/client-go/tools/clientcmd"
)

// Defaults of the install and uninstall commands.
const (
	DefaultNamespace   = "meshplane-system"
	DefaultReleaseName = "meshplane"
	DefaultTimeout     = 10 * time.Minute
	DefaultOutputDir   = ".meshplane-install"
)

// Options are the flags shared by install and uninstall, and install's own.
type Options struct {
	Kubeconfig      string
	Context         string
	Namespace       string
	ReleaseName     string
	CreateNamespace bool
	Timeout         time.Duration

	// Install only.
	Chart       string
	ValueFiles  []string
	Set         []string
	DryRun      bool
	Wait        bool
	ReuseValues bool
	OutputDir   string
	// AdminKubeconfigSecret names the Secret holding the platform's admin
	// kubeconfig (default <release>-admin-kubeconfig).
	AdminKubeconfigSecret string
	// NodeAddress overrides the node address of NodePort URLs.
	NodeAddress string
	// PortForward reaches ClusterIP Services through local forwarded ports
	// and keeps the command running.
	PortForward bool

	// Uninstall only.
	DeleteVolumes bool

	// Charts is the embedded charts directory tree (charts.FS); --chart
	// replaces it.
	Charts fs.FS
	// Out receives progress and results; Err warnings.
	Out io.Writer
}

// NewOptions returns the defaults.
func NewOptions(charts fs.FS) *Options {
	return &Options{
		Namespace:       DefaultNamespace,
		ReleaseName:     DefaultReleaseName,
		CreateNamespace: true,
		Timeout:         DefaultTimeout,
		Wait:            true,
		OutputDir:       DefaultOutputDir,
		Charts:          charts,
		Out:             os.Stdout,
	}
}

// addCommonFlags registers the flags of both commands.
func (o *Options) addCommonFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.Kubeconfig, "kubeconfig", "", "Kubeconfig of the cluster to install into (default $KUBECONFIG, then ~/.kube/config).")
	fs.StringVar(&o.Context, "context", "", "Kube context to use (default: the kubeconfig's current context).")
	fs.StringVar(&o.Namespace, "namespace", o.Namespace, "Namespace of the release.")
	fs.StringVar(&o.ReleaseName, "release-name", o.ReleaseName, "Name of the Helm release.")
	fs.DurationVar(&o.Timeout, "timeout", o.Timeout, "How long to wait for every component to be ready (install) or gone (uninstall).")
}

// AddInstallFlags registers install's flags.
func (o *Options) AddInstallFlags(fs *flag.FlagSet) {
	o.addCommonFlags(fs)
	fs.BoolVar(&o.CreateNamespace, "create-namespace", o.CreateNamespace, "Create the namespace when it does not exist.")
	fs.StringVar(&o.Chart, "chart", "", "Directory of the meshplane umbrella chart (a charts/ checkout) instead of the charts built into this binary.")
	values := func(s string) error { o.ValueFiles = append(o.ValueFiles, s); return nil }
	fs.Func("values", "Values file (repeatable; later files win).", values)
	fs.Func("f", "Shorthand for --values.", values)
	fs.Func("set", "Value on the command line, Helm syntax: a.b=v,c[0]=w (repeatable; wins over --values).", func(s string) error {
		o.Set = append(o.Set, s)
		return nil
	})
	fs.BoolVar(&o.DryRun, "dry-run", false, "Render the chart and print its manifests; touch no cluster.")
	fs.BoolVar(&o.Wait, "wait", o.Wait, "Wait until every component is ready (and print each one's progress).")
	fs.BoolVar(&o.ReuseValues, "reuse-values", false, "On upgrade, start from the release's current values instead of the chart's defaults.")
	fs.StringVar(&o.OutputDir, "output-dir", o.OutputDir, "Directory for the admin kubeconfig and platform.env.")
	fs.StringVar(&o.AdminKubeconfigSecret, "admin-kubeconfig-secret", "", "Secret (key \"kubeconfig\") the charts keep the platform's admin kubeconfig in (default <release-name>-admin-kubeconfig).")
	fs.BoolVar(&o.PortForward, "port-forward", false, "Reach ClusterIP Services through local ports forwarded by the API server (as kubectl port-forward) and keep running until interrupted; platform.env then names 127.0.0.1 ports and is removed at exit.")
	fs.StringVar(&o.NodeAddress, "node-address", "", "Address of a node for NodePort URLs (default: a Ready node's ExternalIP, else InternalIP).")
}

// AddUninstallFlags registers uninstall's flags.
func (o *Options) AddUninstallFlags(fs *flag.FlagSet) {
	o.addCommonFlags(fs)
	fs.BoolVar(&o.DeleteVolumes, "delete-volumes", false, "Delete the release's PersistentVolumeClaims too (its data is lost).")
}

// Validate checks the flags before anything touches a cluster.
func (o *Options) Validate() error {
	var errs []error
	if o.Namespace == "" {
		errs = append(errs, errors.New("--namespace must not be empty"))
	}
	if o.ReleaseName == "" {
		errs = append(errs, errors.New("--release-name must not be empty"))
	}
	if o.Timeout <= 0 {
		errs = append(errs, fmt.Errorf("--timeout %s must be positive", o.Timeout))
	}
	for _, f := range o.ValueFiles {
		if f == "-" {
			continue
		}
		if _, err := os.Stat(f); err != nil {
			errs = append(errs, fmt.Errorf("--values: %w", err))
		}
	}
	if _, err := parseSet(o.Set); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// checkKubeContext refuses a kubeconfig without the context to use, before
// Helm reports it less clearly.
func (o *Options) checkKubeContext() error {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if o.Kubeconfig != "" {
		rules.ExplicitPath = o.Kubeconfig
	}
	raw, err := rules.Load()
	if err != nil {
		return fmt.Errorf("reading kubeconfig: %w", err)
	}
	name := o.Context
	if name == "" {
		name = raw.CurrentContext
	}
	if name == "" {
		return errors.New("no kube context: the kubeconfig has no current context (give --kubeconfig or --context, or set KUBECONFIG)")
	}
	if _, ok := raw.Contexts[name]; !ok {
		return fmt.Errorf("kube context %q not found in the kubeconfig (give --kubeconfig or --context, or set KUBECONFIG)", name)
	}
	return nil
}

func (o *Options) adminSecretName() string {
	if o.AdminKubeconfigSecret != "" {
		return o.AdminKubeconfigSecret
	}
	return o.ReleaseName + "-admin-kubeconfig"
}
