package controller

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/meshplane/meshplane/examples/internal/consumersecret"
	postgresv1alpha1 "github.com/meshplane/meshplane/examples/postgres/api/v1alpha1"
)

// delete step: drop the database (disconnecting its sessions) and its
// role, delete the credentials Secret where the claim lets the provider,
// then remove the finalizer.
func (r *reconciler) delete(ctx context.Context, c client.Client, s *state) error {
	if !controllerutil.ContainsFinalizer(s.db, Finalizer) {
		return nil
	}
	if s.db.Status.Phase != postgresv1alpha1.PhaseDeleting {
		s.db.Status.Phase = postgresv1alpha1.PhaseDeleting
		if err := c.Status().Update(ctx, s.db); err != nil {
			return fmt.Errorf("setting phase Deleting: %w", err)
		}
	}
	if _, err := r.pool.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{s.database}.Sanitize()+" WITH (FORCE)"); err != nil {
		return fmt.Errorf("dropping database %s: %w", s.database, err)
	}
	if _, err := r.pool.Exec(ctx, "DROP ROLE IF EXISTS "+pgx.Identifier{s.role}.Sanitize()); err != nil {
		return fmt.Errorf("dropping role %s: %w", s.role, err)
	}
	if err := consumersecret.Delete(ctx, s.secrets, s.db.Namespace, secretName(s.db.Name), ManagedBy); err != nil {
		return fmt.Errorf("deleting the credentials Secret: %w", err)
	}
	controllerutil.RemoveFinalizer(s.db, Finalizer)
	if err := c.Update(ctx, s.db); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("removing finalizer: %w", err)
	}
	return nil
}
