package permissionclaimlabel

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/klog/v2"

	"github.com/meshplane/meshplane/core/internal/apiexport"
)

// labelsReconciler sets the claim labels on the objects of one resource
// in one consumer.
type labelsReconciler struct {
	list   func(ctx context.Context, cluster string, gr schema.GroupResource) ([]Object, bool, error)
	claims func(cluster string, gr schema.GroupResource) []apiexport.Claim
}

// notServedRetry is how long to wait when the resource is not served
// (yet): a bound resource appears shortly after its binding.
const notServedRetry = 2 * time.Second

func (r *labelsReconciler) reconcile(ctx context.Context, cluster string, gr schema.GroupResource) (time.Duration, error) {
	objs, ok, err := r.list(ctx, cluster, gr)
	if err != nil {
		return 0, fmt.Errorf("listing %s: %w", gr, err)
	}
	if !ok {
		if len(r.claims(cluster, gr)) > 0 {
			return notServedRetry, nil
		}
		return 0, nil
	}
	claims := r.claims(cluster, gr)
	updated := 0
	for _, o := range objs {
		want, changed := apiexport.ClaimLabels(o.Labels, claims)
		if !changed {
			continue
		}
		if err := o.SetLabels(ctx, want); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return 0, fmt.Errorf("labelling %s %s/%s: %w", gr, o.Namespace, o.Name, err)
		}
		updated++
	}
	klog.FromContext(ctx).V(2).Info("claim labels set", "resource", gr.String(), "objects", len(objs), "updated", updated)
	return 0, nil
}
