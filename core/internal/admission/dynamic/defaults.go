package dynamic

import (
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/meshplane/meshplane/core/internal/apis/builtin"
)

// The defaults kube-apiserver stores with admission configuration
// objects. The dispatchers get defaulted copies (webhook configurations
// are defaulted when decoded too, but one stored before that may lack
// them): an unset selector matches everything, an unset failure policy
// fails closed, and so on, exactly as on Kubernetes.

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

func defaultedMutating(in *admissionregistrationv1.MutatingWebhookConfiguration) *admissionregistrationv1.MutatingWebhookConfiguration {
	out := in.DeepCopy()
	builtin.DefaultMutatingWebhooks(out)
	return out
}

func defaultedValidating(in *admissionregistrationv1.ValidatingWebhookConfiguration) *admissionregistrationv1.ValidatingWebhookConfiguration {
	out := in.DeepCopy()
	builtin.DefaultValidatingWebhooks(out)
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
