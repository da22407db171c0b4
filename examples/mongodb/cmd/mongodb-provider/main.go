// Command mongodb-provider is the MongoDB example provider: it reconciles
// the MongoDBs of every workspace that binds mongodb.examples.meshplane.io
// into MongoDBCommunity objects of a downstream cluster and reports their
// status back (see examples/mongodb/README.md).
//
//	mongodb-provider --kubeconfig provider.kubeconfig --workspace root:mongodb-provider \
//	  --downstream-kubeconfig downstream.kubeconfig
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/go-logr/logr"
	apisv1alpha1 "github.com/kcp-dev/sdk/apis/apis/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"github.com/meshplane/meshplane/examples/internal/frame"
	mongodbv1alpha1 "github.com/meshplane/meshplane/examples/mongodb/api/v1alpha1"
	"github.com/meshplane/meshplane/examples/mongodb/controller"
)

type options struct {
	frame.Options
	DownstreamKubeconfig, DownstreamContext, DownstreamNamespace string
}

func main() {
	var o options
	fs := flag.NewFlagSet("mongodb-provider", flag.ExitOnError)
	o.AddFlags(fs, mongodbv1alpha1.GroupName)
	fs.StringVar(&o.DownstreamKubeconfig, "downstream-kubeconfig", "", "kubeconfig of the downstream cluster the MongoDBCommunity objects go to (required)")
	fs.StringVar(&o.DownstreamContext, "downstream-context", "", "context in --downstream-kubeconfig")
	fs.StringVar(&o.DownstreamNamespace, "downstream-namespace", "mongodb-provider", "namespace downstream for every consumer's objects (created if missing)")
	log := frame.ParseFlags(fs, os.Args[1:])
	err := o.Validate()
	if o.DownstreamKubeconfig == "" {
		err = errors.Join(err, errors.New("--downstream-kubeconfig is required"))
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "mongodb-provider:", err)
		os.Exit(2)
	}
	if err := run(ctrl.SetupSignalHandler(), o, log.WithName("mongodb-provider")); err != nil {
		log.Error(err, "mongodb-provider failed")
		os.Exit(1)
	}
}

func run(ctx context.Context, o options, log logr.Logger) error {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, apisv1alpha1.AddToScheme, mongodbv1alpha1.AddToScheme} {
		if err := add(scheme); err != nil {
			return err
		}
	}
	cfg, err := o.ProviderConfig("mongodb-provider")
	if err != nil {
		return err
	}
	dcfg, err := frame.LoadKubeconfig(o.DownstreamKubeconfig, o.DownstreamContext)
	if err != nil {
		return err
	}
	downstream, err := cluster.New(dcfg, func(co *cluster.Options) {
		co.Scheme = scheme
		co.Cache = cache.Options{DefaultNamespaces: map[string]cache.Config{o.DownstreamNamespace: {}}}
	})
	if err != nil {
		return fmt.Errorf("downstream cluster: %w", err)
	}
	if err := prepareDownstream(ctx, downstream, o.DownstreamNamespace); err != nil {
		return err
	}
	kit, _, err := o.NewKit(ctx, cfg, scheme, log)
	if err != nil {
		return err
	}
	if err := kit.Manager.GetLocalManager().Add(downstream); err != nil {
		return err
	}
	if err := controller.SetupWithManager(kit.Manager, controller.Options{Downstream: downstream, Namespace: o.DownstreamNamespace, Workers: o.Workers}); err != nil {
		return err
	}
	log.Info("starting", "virtualWorkspace", kit.URL, "downstream", dcfg.Host, "namespace", o.DownstreamNamespace)
	return kit.Manager.Start(ctx)
}

// prepareDownstream checks that the downstream cluster serves
// MongoDBCommunity and creates the namespace.
func prepareDownstream(ctx context.Context, c cluster.Cluster, namespace string) error {
	// A CRD just created is served within moments: wait up to a minute.
	for i := 0; ; i++ {
		_, err := c.GetRESTMapper().RESTMapping(controller.DownstreamGVK.GroupKind(), controller.DownstreamGVK.Version)
		if err == nil {
			break
		}
		if i == 60 || ctx.Err() != nil {
			return fmt.Errorf("the downstream cluster does not serve %s (install the MongoDB Community Operator, or examples/mongodb/config/downstream): %w",
				controller.DownstreamGVK, err)
		}
		time.Sleep(time.Second)
	}
	cl, err := client.New(c.GetConfig(), client.Options{Scheme: c.GetScheme(), Mapper: c.GetRESTMapper()})
	if err != nil {
		return err
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}
	if err := cl.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("downstream namespace %s: %w", namespace, err)
	}
	return nil
}
