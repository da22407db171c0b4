package resourcequota

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/meshplane/meshplane/core/internal/quota"
)

// usageStep recounts one quota and writes its status if it changed.
type usageStep struct {
	get          func(ctx context.Context, cluster, namespace, name string) (*corev1.ResourceQuota, error)
	count        quota.Counter
	updateStatus func(ctx context.Context, cluster string, q *corev1.ResourceQuota) error
}

func (s usageStep) reconcile(ctx context.Context, cluster, namespace, name string) error {
	q, err := s.get(ctx, cluster, namespace, name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	used, err := quota.Usage(ctx, s.count, cluster, q)
	if err != nil {
		return err
	}
	if apiequality.Semantic.DeepEqual(q.Status.Hard, q.Spec.Hard) && apiequality.Semantic.DeepEqual(q.Status.Used, used) {
		return nil
	}
	q = q.DeepCopy()
	q.Status.Hard = q.Spec.Hard.DeepCopy()
	q.Status.Used = used
	if err := s.updateStatus(ctx, cluster, q); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("updating status: %w", err)
	}
	return nil
}
