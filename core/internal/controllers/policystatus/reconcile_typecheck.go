package policystatus

import (
	"context"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
)

// typeCheckStep writes the status of a policy whose generation is new.
type typeCheckStep struct {
	check        func(cluster string, p *admissionregistrationv1.ValidatingAdmissionPolicy) []admissionregistrationv1.ExpressionWarning
	updateStatus func(ctx context.Context, cluster string, p *admissionregistrationv1.ValidatingAdmissionPolicy) error
}

func (s typeCheckStep) reconcile(ctx context.Context, cluster string, p *admissionregistrationv1.ValidatingAdmissionPolicy) error {
	if p.Generation <= p.Status.ObservedGeneration {
		return nil
	}
	p = p.DeepCopy() // the informer's
	p.Status.ObservedGeneration = p.Generation
	p.Status.TypeChecking = &admissionregistrationv1.TypeChecking{ExpressionWarnings: s.check(cluster, p)}
	return s.updateStatus(ctx, cluster, p)
}
