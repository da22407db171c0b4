package dynamic

import (
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The defaults kube-apiserver stores with admission configuration
// objects. The registry keeps objects as written, so the dispatchers get
// defaulted copies: an unset selector matches everything, an unset
// failure policy fails closed, and so on, exactly as on Kubernetes.

func defaultRules(rules []admissionregistrationv1.RuleWithOperations) {
	for i := range rules {
		if rules[i].Scope == nil {
			all := admissionregistrationv1.AllScopes
			rules[i].Scope = &all
		}
	}
}

func defaultSelector(s **metav1.LabelSelector) {
	if *s == nil {
		*s = &metav1.LabelSelector{}
	}
}

func defaultFailurePolicy(p **admissionregistrationv1.FailurePolicyType) {
	if *p == nil {
		fail := admissionregistrationv1.Fail
		*p = &fail
	}
}

func defaultMatchPolicy(p **admissionregistrationv1.MatchPolicyType) {
	if *p == nil {
		eq := admissionregistrationv1.Equivalent
		*p = &eq
	}
}

func defaultTimeout(t **int32) {
	if *t == nil {
		ten := int32(10)
		*t = &ten
	}
}

func defaultedMutating(in *admissionregistrationv1.MutatingWebhookConfiguration) *admissionregistrationv1.MutatingWebhookConfiguration {
	out := in.DeepCopy()
	for i := range out.Webhooks {
		h := &out.Webhooks[i]
		defaultRules(h.Rules)
		defaultSelector(&h.NamespaceSelector)
		defaultSelector(&h.ObjectSelector)
		defaultFailurePolicy(&h.FailurePolicy)
		defaultMatchPolicy(&h.MatchPolicy)
		defaultTimeout(&h.TimeoutSeconds)
		if h.ReinvocationPolicy == nil {
			never := admissionregistrationv1.NeverReinvocationPolicy
			h.ReinvocationPolicy = &never
		}
	}
	return out
}

func defaultedValidating(in *admissionregistrationv1.ValidatingWebhookConfiguration) *admissionregistrationv1.ValidatingWebhookConfiguration {
	out := in.DeepCopy()
	for i := range out.Webhooks {
		h := &out.Webhooks[i]
		defaultRules(h.Rules)
		defaultSelector(&h.NamespaceSelector)
		defaultSelector(&h.ObjectSelector)
		defaultFailurePolicy(&h.FailurePolicy)
		defaultMatchPolicy(&h.MatchPolicy)
		defaultTimeout(&h.TimeoutSeconds)
	}
	return out
}

func defaultMatchResources(m **admissionregistrationv1.MatchResources) {
	if *m == nil {
		*m = &admissionregistrationv1.MatchResources{}
	}
	r := *m
	defaultSelector(&r.NamespaceSelector)
	defaultSelector(&r.ObjectSelector)
	defaultMatchPolicy(&r.MatchPolicy)
	for _, rules := range [][]admissionregistrationv1.NamedRuleWithOperations{r.ResourceRules, r.ExcludeResourceRules} {
		for i := range rules {
			if rules[i].Scope == nil {
				all := admissionregistrationv1.AllScopes
				rules[i].Scope = &all
			}
		}
	}
}

func defaultedValidatingPolicy(in *admissionregistrationv1.ValidatingAdmissionPolicy) *admissionregistrationv1.ValidatingAdmissionPolicy {
	out := in.DeepCopy()
	defaultFailurePolicy(&out.Spec.FailurePolicy)
	defaultMatchResources(&out.Spec.MatchConstraints)
	return out
}

func defaultedValidatingBinding(in *admissionregistrationv1.ValidatingAdmissionPolicyBinding) *admissionregistrationv1.ValidatingAdmissionPolicyBinding {
	out := in.DeepCopy()
	if out.Spec.MatchResources != nil {
		defaultMatchResources(&out.Spec.MatchResources)
	}
	defaultParamRef(out.Spec.ParamRef)
	return out
}

func defaultedMutatingPolicy(in *admissionregistrationv1.MutatingAdmissionPolicy) *admissionregistrationv1.MutatingAdmissionPolicy {
	out := in.DeepCopy()
	defaultFailurePolicy(&out.Spec.FailurePolicy)
	defaultMatchResources(&out.Spec.MatchConstraints)
	if out.Spec.ReinvocationPolicy == "" {
		out.Spec.ReinvocationPolicy = admissionregistrationv1.NeverReinvocationPolicy
	}
	return out
}

func defaultedMutatingBinding(in *admissionregistrationv1.MutatingAdmissionPolicyBinding) *admissionregistrationv1.MutatingAdmissionPolicyBinding {
	out := in.DeepCopy()
	if out.Spec.MatchResources != nil {
		defaultMatchResources(&out.Spec.MatchResources)
	}
	defaultParamRef(out.Spec.ParamRef)
	return out
}

func defaultParamRef(r *admissionregistrationv1.ParamRef) {
	if r != nil && r.ParameterNotFoundAction == nil {
		deny := admissionregistrationv1.DenyAction
		r.ParameterNotFoundAction = &deny
	}
}
