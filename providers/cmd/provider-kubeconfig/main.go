// Command provider-kubeconfig writes the kubeconfig a provider's
// controllers run with: its server is the virtual workspace URL of the
// provider's APIExport (read from the APIExportEndpointSlice), so a
// multicluster-runtime manager, or kubectl with --server=<url>/clusters/*,
// sees every workspace that binds the export.
//
//	provider-kubeconfig --kubeconfig admin.kubeconfig --workspace root:platform-mesh-system \
//	    --endpoint-slice core.platform-mesh.io -o provider.kubeconfig
//
// With --service-account it also creates a ServiceAccount in the provider
// workspace with exactly the rights the export needs and puts its token in
// the kubeconfig (TokenRequest); with --user and --token it grants those
// rights to a static-token user instead.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	apisv1alpha1 "github.com/kcp-dev/sdk/apis/apis/v1alpha1"
	apisv1alpha2 "github.com/kcp-dev/sdk/apis/apis/v1alpha2"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/meshplane/meshplane/providers/credentials"
	"github.com/meshplane/meshplane/providers/endpointslice"
)

type options struct {
	kubeconfig, context, workspace, slice, output string
	serviceAccount, namespace, user, token        string
	wait, tokenTTL                                time.Duration
}

func (o *options) addFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.kubeconfig, "kubeconfig", os.Getenv("KUBECONFIG"), "kubeconfig with access to the provider workspace")
	fs.StringVar(&o.context, "context", "", "context of --kubeconfig (default: its current context)")
	fs.StringVar(&o.workspace, "workspace", "", "path of the provider workspace, e.g. root:platform-mesh-system (default: the context's server as it is)")
	fs.StringVar(&o.slice, "endpoint-slice", "", "name of the APIExportEndpointSlice (required)")
	fs.StringVar(&o.output, "o", "-", "file to write the kubeconfig to (- for stdout)")
	fs.StringVar(&o.output, "output", "-", "same as -o")
	fs.DurationVar(&o.wait, "wait", 2*time.Minute, "how long to wait for the slice's URL")
	fs.StringVar(&o.serviceAccount, "service-account", "", "create this ServiceAccount with the export's rights and use its token")
	fs.StringVar(&o.namespace, "namespace", "default", "namespace of --service-account")
	fs.DurationVar(&o.tokenTTL, "token-ttl", 24*time.Hour, "lifetime of the ServiceAccount token")
	fs.StringVar(&o.user, "user", "", "grant the export's rights to this (static-token) user instead of a ServiceAccount")
	fs.StringVar(&o.token, "token", "", "the --user's token, written into the kubeconfig")
}

func (o *options) validate() error {
	if o.slice == "" {
		return errors.New("--endpoint-slice is required")
	}
	if o.serviceAccount != "" && o.user != "" {
		return errors.New("--service-account and --user exclude each other")
	}
	if (o.user == "") != (o.token == "") {
		return errors.New("--user and --token go together")
	}
	return nil
}

func main() {
	o := &options{}
	fs := flag.NewFlagSet("provider-kubeconfig", flag.ExitOnError)
	o.addFlags(fs)
	_ = fs.Parse(os.Args[1:])
	if err := o.validate(); err != nil {
		fmt.Fprintln(os.Stderr, "provider-kubeconfig:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "provider-kubeconfig:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, o *options) error {
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		&clientcmd.ClientConfigLoadingRules{ExplicitPath: o.kubeconfig},
		&clientcmd.ConfigOverrides{CurrentContext: o.context}).ClientConfig()
	if err != nil {
		return fmt.Errorf("loading kubeconfig: %w", err)
	}
	if o.workspace != "" {
		cfg.Host = endpointslice.BaseHost(cfg.Host) + "/clusters/" + o.workspace
	}
	waitCtx, cancel := context.WithTimeout(ctx, o.wait)
	defer cancel()
	url, err := endpointslice.WaitForURL(waitCtx, cfg, o.slice, time.Second)
	if err != nil {
		return err
	}

	token := o.token
	if o.serviceAccount != "" || o.user != "" {
		subject := credentials.Subject{Name: o.user}
		if o.serviceAccount != "" {
			subject = credentials.Subject{Namespace: o.namespace, Name: o.serviceAccount}
		}
		if err := grant(ctx, cfg, o.slice, subject); err != nil {
			return err
		}
		if o.serviceAccount != "" {
			token, err = credentials.Token(ctx, cfg, o.namespace, o.serviceAccount, o.tokenTTL)
			if errors.Is(err, credentials.ErrNoTokenRequest) {
				return fmt.Errorf("%w\nThe ServiceAccount %s/%s and its rights exist; grant the same rights to a static-token user with --user <name> --token <token> instead", err, o.namespace, o.serviceAccount)
			}
			if err != nil {
				return err
			}
		}
	}

	kc, err := credentials.Kubeconfig(cfg, url, token)
	if err != nil {
		return err
	}
	if o.output == "-" {
		data, err := clientcmd.Write(*kc)
		if err != nil {
			return err
		}
		_, err = os.Stdout.Write(data)
		return err
	}
	if err := clientcmd.WriteToFile(*kc, o.output); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "wrote %s: server %s (use %s/clusters/* for every consumer)\n", o.output, url, strings.TrimSuffix(url, "/"))
	return nil
}

// grant reads the slice's export and gives subject its rights.
func grant(ctx context.Context, cfg *rest.Config, sliceName string, subject credentials.Subject) error {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{apisv1alpha1.AddToScheme, apisv1alpha2.AddToScheme, corev1.AddToScheme, rbacv1.AddToScheme} {
		if err := add(scheme); err != nil {
			return err
		}
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return err
	}
	slice := &apisv1alpha1.APIExportEndpointSlice{}
	if err := c.Get(ctx, client.ObjectKey{Name: sliceName}, slice); err != nil {
		return fmt.Errorf("APIExportEndpointSlice %s: %w", sliceName, err)
	}
	if p := slice.Spec.APIExport.Path; p != "" && !strings.HasSuffix(cfg.Host, "/clusters/"+p) {
		return fmt.Errorf("the slice's export lives in %s: run against that workspace to grant rights on it", p)
	}
	export := &apisv1alpha2.APIExport{}
	if err := c.Get(ctx, client.ObjectKey{Name: slice.Spec.APIExport.Name}, export); err != nil {
		return fmt.Errorf("APIExport %s: %w", slice.Spec.APIExport.Name, err)
	}
	return credentials.Grant(ctx, c, export, sliceName, subject)
}
