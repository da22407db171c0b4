package controller

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/meshplane/meshplane/examples/internal/consumersecret"

	mongodbv1alpha1 "github.com/meshplane/meshplane/examples/mongodb/api/v1alpha1"
)

// delete step: remove the downstream object and password Secret and the
// consumer's connection Secret (where the claim lets the provider), then
// the finalizer.
func (r *reconciler) delete(ctx context.Context, c client.Client, s *state) error {
	if !controllerutil.ContainsFinalizer(s.db, Finalizer) {
		return nil
	}
	if s.db.Status.Phase != mongodbv1alpha1.PhaseDeleting {
		s.db.Status.Phase = mongodbv1alpha1.PhaseDeleting
		if err := c.Status().Update(ctx, s.db); err != nil {
			return fmt.Errorf("setting phase Deleting: %w", err)
		}
	}
	name := s.consumer.downstreamName()
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(DownstreamGVK)
	obj.SetNamespace(r.namespace)
	obj.SetName(name)
	for _, o := range []client.Object{obj, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: r.namespace, Name: name + "-password"}}} {
		if err := r.downstream.Delete(ctx, o); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting downstream %s: %w", o.GetName(), err)
		}
	}
	// Wait until the downstream object is really gone (an operator's own
	// finalizer may hold it); its deletion event brings us back.
	if err := r.downstreamReader.Get(ctx, client.ObjectKeyFromObject(obj), obj.DeepCopy()); err == nil {
		log.FromContext(ctx).Info("waiting for the downstream object to go", "name", name)
		return nil
	} else if !apierrors.IsNotFound(err) {
		return err
	}
	if err := consumersecret.Delete(ctx, s.secrets, s.db.Namespace, secretName(s.db.Name), ManagedBy); err != nil {
		return fmt.Errorf("deleting the connection Secret: %w", err)
	}
	controllerutil.RemoveFinalizer(s.db, Finalizer)
	if err := c.Update(ctx, s.db); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("removing finalizer: %w", err)
	}
	return nil
}
