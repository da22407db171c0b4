// Package resourcequota refuses creates that would exceed a ResourceQuota
// of the request's logical cluster, with kube-apiserver's 403 "exceeded
// quota" error, and charges each admitted create to the quotas it
// counts against (status.used), as kube's quota admission does. Quotas
// of other clusters are never consulted.
package resourcequota

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apiserver/pkg/admission"

	"github.com/meshplane/meshplane/core/internal/clusters"
	"github.com/meshplane/meshplane/core/internal/quota"
)

// Plugin is the admission plugin.
type Plugin struct {
	*admission.Handler
	// Quotas lists the quotas of a cluster (from an informer: cheap).
	Quotas func(ctx context.Context, cluster string) ([]*corev1.ResourceQuota, error)
	// Get reads a quota live; UpdateStatus writes its status (optimistic
	// concurrency serializes concurrent creates).
	Get          func(ctx context.Context, cluster, namespace, name string) (*corev1.ResourceQuota, error)
	UpdateStatus func(ctx context.Context, cluster string, q *corev1.ResourceQuota) error
	// Count counts objects when a quota has no usage recorded yet.
	Count quota.Counter
}

var _ admission.ValidationInterface = &Plugin{}

// maxAttempts bounds the retries of a charge that lost a race.
const maxAttempts = 10

// Validate implements admission.ValidationInterface.
func (p *Plugin) Validate(ctx context.Context, a admission.Attributes, _ admission.ObjectInterfaces) error {
	if a.GetOperation() != admission.Create || a.GetSubresource() != "" {
		return nil
	}
	cluster, ok := clusters.From(ctx)
	if !ok || cluster == clusters.Wildcard {
		return nil
	}
	gr := a.GetResource().GroupResource()
	quotas, err := p.Quotas(ctx, cluster)
	if err != nil {
		return admission.NewForbidden(a, fmt.Errorf("listing quotas: %w", err))
	}
	for _, q := range quotas {
		if !quota.Applies(q, a.GetNamespace()) || len(quota.Names(q, gr)) == 0 {
			continue
		}
		if err := p.charge(ctx, a, cluster, q); err != nil {
			return err
		}
	}
	return nil
}

// charge checks q against one more object and records it.
func (p *Plugin) charge(ctx context.Context, a admission.Attributes, cluster string, cached *corev1.ResourceQuota) error {
	gr := a.GetResource().GroupResource()
	for attempt := 0; ; attempt++ {
		q, err := p.Get(ctx, cluster, cached.Namespace, cached.Name)
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return admission.NewForbidden(a, fmt.Errorf("reading quota %s: %w", cached.Name, err))
		}
		requested, used, limited := corev1.ResourceList{}, corev1.ResourceList{}, corev1.ResourceList{}
		next := q.DeepCopy()
		if next.Status.Used == nil {
			next.Status.Used = corev1.ResourceList{}
		}
		next.Status.Hard = q.Spec.Hard.DeepCopy()
		exceeded := false
		for _, name := range quota.Names(q, gr) {
			current, ok := q.Status.Used[name]
			if !ok {
				n, err := p.Count(ctx, cluster, quota.Scope(q), gr)
				if err != nil {
					return admission.NewForbidden(a, fmt.Errorf("counting for quota %s: %w", q.Name, err))
				}
				current = *resource.NewQuantity(n, resource.DecimalSI)
			}
			after := current.DeepCopy()
			after.Add(resource.MustParse("1"))
			requested[name] = resource.MustParse("1")
			used[name] = current
			limited[name] = q.Spec.Hard[name]
			if hard := q.Spec.Hard[name]; after.Cmp(hard) > 0 {
				exceeded = true
			}
			next.Status.Used[name] = after
		}
		if exceeded {
			return admission.NewForbidden(a, fmt.Errorf("exceeded quota: %s, requested: %s, used: %s, limited: %s",
				q.Name, quota.Format(requested), quota.Format(used), quota.Format(limited)))
		}
		if a.IsDryRun() {
			return nil
		}
		err = p.UpdateStatus(ctx, cluster, next)
		if err == nil || apierrors.IsNotFound(err) {
			return nil
		}
		if !apierrors.IsConflict(err) || attempt+1 >= maxAttempts {
			return admission.NewForbidden(a, fmt.Errorf("status unknown for quota: %s: %w", q.Name, err))
		}
	}
}
