package dynamic

import (
	"context"

	"k8s.io/apiserver/pkg/admission"
)

// WithReinvocation runs the mutating part of chain a second time when a
// plugin asks for it (a webhook or policy with reinvocationPolicy
// IfNeeded whose object a later mutation changed), as kube-apiserver's
// admission chain does.
func WithReinvocation(chain admission.Interface) admission.Interface {
	return reinvoker{chain}
}

type reinvoker struct{ chain admission.Interface }

func (r reinvoker) Handles(op admission.Operation) bool { return r.chain.Handles(op) }

func (r reinvoker) Admit(ctx context.Context, a admission.Attributes, o admission.ObjectInterfaces) error {
	m, ok := r.chain.(admission.MutationInterface)
	if !ok {
		return nil
	}
	if err := m.Admit(ctx, a, o); err != nil {
		return err
	}
	if s := a.GetReinvocationContext(); s.ShouldReinvoke() {
		s.SetIsReinvoke()
		return m.Admit(ctx, a, o)
	}
	return nil
}

func (r reinvoker) Validate(ctx context.Context, a admission.Attributes, o admission.ObjectInterfaces) error {
	if v, ok := r.chain.(admission.ValidationInterface); ok {
		return v.Validate(ctx, a, o)
	}
	return nil
}
