// Package universal is the initializer of the universal workspace type
// (root:universal): it gives a new workspace the namespaces default and
// kube-system, then removes itself from the cluster's initializers.
package universal

import (
	"context"
	"time"

	corev1alpha1 "github.com/kcp-dev/sdk/apis/core/v1alpha1"
	"github.com/kcp-dev/sdk/apis/tenancy/initialization"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/meshplane/meshplane/core/pkg/controllers/runner"
	"github.com/meshplane/meshplane/core/pkg/tenancy"
)

// Initializer is this controller's initializer id.
const Initializer = corev1alpha1.LogicalClusterInitializer("root:universal")

// Controller initializes universal workspaces.
type Controller struct {
	Clients tenancy.Clients
	Index   *tenancy.Index

	runner *runner.Runner
}

// Run works until ctx is done.
func (c *Controller) Run(ctx context.Context) {
	c.runner = runner.New("universal-initializer", 4, c.reconcile)
	c.Index.OnChange(func(lc *corev1alpha1.LogicalCluster) bool {
		return lc.Status.Phase == corev1alpha1.LogicalClusterPhaseInitializing &&
			initialization.InitializerPresent(Initializer, lc.Status.Initializers)
	}, c.runner.Add)
	c.runner.Run(ctx)
}

func (c *Controller) reconcile(ctx context.Context, cluster string) (time.Duration, error) {
	lc, err := c.Clients.LogicalClusters.Get(ctx, cluster, "", corev1alpha1.LogicalClusterName)
	if apierrors.IsNotFound(err) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	if !initialization.InitializerPresent(Initializer, lc.Status.Initializers) {
		return 0, nil
	}
	for _, ns := range []string{"default", "kube-system"} {
		_, err := c.Clients.Namespaces.Create(ctx, cluster, "", &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return 0, err
		}
	}
	lc = lc.DeepCopy()
	lc.Status.Initializers = initialization.EnsureInitializerAbsent(Initializer, lc.Status.Initializers)
	lc.Labels = tenancy.WithLifecycleLabels(lc.Labels, lc.Status.Initializers, nil)
	_, err = c.Clients.LogicalClusters.UpdateStatus(ctx, cluster, "", lc.Name, lc)
	return 0, err
}
