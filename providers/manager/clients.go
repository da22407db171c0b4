package manager

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/multicluster-runtime/pkg/multicluster"
)

// Client returns the client of an engaged workspace (by logical-cluster
// name or path): typed reads come from the workspace's view of the shared
// cache, writes go to the workspace through the client its endpoint shares
// with every workspace (package scoped).
func (k *Kit) Client(ctx context.Context, name string) (client.Client, error) {
	cl, err := k.Manager.GetCluster(ctx, multicluster.ClusterName(name))
	if err != nil {
		return nil, err
	}
	return cl.GetClient(), nil
}
