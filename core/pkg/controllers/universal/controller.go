// Package universal is the initializer of the universal workspace type
// (root:universal): it gives a new workspace the namespaces default and
// kube-system.
package universal

import (
	"context"
	"time"

	corev1alpha1 "github.com/kcp-dev/sdk/apis/core/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/meshplane/meshplane/core/pkg/controllers/initializer"
	"github.com/meshplane/meshplane/core/pkg/tenancy"
)

// Initializer is this controller's initializer id.
const Initializer = corev1alpha1.LogicalClusterInitializer("root:universal")

// Controller initializes universal workspaces.
type Controller struct {
	Clients tenancy.Clients
	Index   *tenancy.Index
}

// New returns the controller.
func New(clients tenancy.Clients, index *tenancy.Index) *Controller {
	return &Controller{Clients: clients, Index: index}
}

// Run works until ctx is done.
func (c *Controller) Run(ctx context.Context) {
	(&initializer.Initializer{Name: Initializer, LogicalClusters: c.Clients.LogicalClusters, Index: c.Index, Step: c.step}).Run(ctx, 4)
}

func (c *Controller) step(ctx context.Context, cluster string, _ *corev1alpha1.LogicalCluster) (bool, time.Duration, error) {
	for _, ns := range []string{"default", "kube-system"} {
		_, err := c.Clients.Namespaces.Create(ctx, cluster, "", &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return false, 0, err
		}
	}
	return true, 0, nil
}
