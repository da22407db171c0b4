// Package controller is the PostgreSQL example's controller: every
// Database in every workspace that binds the export becomes a real
// database with its owner role on one PostgreSQL server, named after the
// consumer's logical cluster, namespace and name, so two workspaces never
// share one; the role's credentials go into the consumer's namespace as a
// Secret through the export's permission claim on secrets. A finalizer
// drops the database and the role before the Database goes. The steps
// are in reconcile_*.go; see ../README.md.
package controller

import (
	"context"

	"github.com/jackc/pgx/v5/pgxpool"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	mcbuilder "sigs.k8s.io/multicluster-runtime/pkg/builder"
	mccontroller "sigs.k8s.io/multicluster-runtime/pkg/controller"
	mcmanager "sigs.k8s.io/multicluster-runtime/pkg/manager"
	"sigs.k8s.io/multicluster-runtime/pkg/multicluster"

	postgresv1alpha1 "github.com/meshplane/meshplane/examples/postgres/api/v1alpha1"
)

const (
	// Finalizer holds a Database until it is dropped on the server.
	Finalizer = "postgres.examples.meshplane.io/drop"
	// ManagedBy is the consumersecret.LabelManagedBy value of the Secrets the provider wrote.
	ManagedBy = "postgres-provider"
)

// Options configure the controller.
type Options struct {
	// Pool connects to the server as a role that may create databases and
	// roles (a superuser, or CREATEDB CREATEROLE).
	Pool *pgxpool.Pool
	// Host and Port consumers connect to (written into the Secret).
	Host string
	Port int
	// Workers is how many objects are reconciled in parallel (at least 1).
	Workers int
}

// SetupWithManager adds the controller to mgr.
func SetupWithManager(mgr mcmanager.Manager, opts Options) error {
	r := &reconciler{
		cluster: func(ctx context.Context, name string) (cluster.Cluster, error) {
			return mgr.GetCluster(ctx, multicluster.ClusterName(name))
		},
		pool: opts.Pool,
		host: opts.Host,
		port: opts.Port,
	}
	return mcbuilder.ControllerManagedBy(mgr).
		Named("database").
		For(&postgresv1alpha1.Database{}).
		WithOptions(mccontroller.Options{MaxConcurrentReconciles: max(opts.Workers, 1)}).
		Complete(r)
}
