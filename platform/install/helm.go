package install

import (
	"fmt"

	"helm.sh/helm/v3/pkg/action"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// cluster is what the commands talk to: Helm's configuration (release
// storage in Secrets of the release namespace, as the helm CLI keeps them,
// so `helm list/status/rollback` see the same release) and a clientset for
// progress, diagnosis and outputs.
type cluster struct {
	helm   *action.Configuration
	client kubernetes.Interface
	rest   *rest.Config
	// forwarder is set with --port-forward.
	forwarder *forwarder
}

func (o *Options) connect() (*cluster, error) {
	if err := o.checkKubeContext(); err != nil {
		return nil, err
	}
	flags := genericclioptions.NewConfigFlags(true)
	flags.Namespace = &o.Namespace
	if o.Kubeconfig != "" {
		flags.KubeConfig = &o.Kubeconfig
	}
	if o.Context != "" {
		flags.Context = &o.Context
	}
	cfg := &action.Configuration{}
	if err := cfg.Init(flags, o.Namespace, "secret", func(string, ...any) {}); err != nil {
		return nil, fmt.Errorf("helm: %w", err)
	}
	restCfg, err := flags.ToRESTConfig()
	if err != nil {
		return nil, fmt.Errorf("kubeconfig: %w", err)
	}
	client, err := kubernetes.NewForConfig(restCfg)
	if err != nil {
		return nil, err
	}
	if err := cfg.KubeClient.IsReachable(); err != nil {
		return nil, fmt.Errorf("cluster of context %q: %w", flagOrCurrent(o.Context), err)
	}
	c := &cluster{helm: cfg, client: client, rest: restCfg}
	if o.PortForward {
		c.forwarder = &forwarder{rest: restCfg, client: client}
	}
	return c, nil
}

func flagOrCurrent(ctx string) string {
	if ctx == "" {
		return "(current)"
	}
	return ctx
}
