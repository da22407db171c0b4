package builtin

import (
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The defaults kube-apiserver's admissionregistration v1 gives webhook
// configurations and admission policies. Webhook configurations get them
// when decoded (addDefaults); the admission dispatchers apply all of them
// to copies of what they load.

// DefaultValidatingWebhooks gives every webhook of c what kube-apiserver's
// v1 defaults give it: failurePolicy Fail, matchPolicy Equivalent, empty
// (match-all) namespace and object selectors, timeoutSeconds 10, rules of
// every scope, service port 443.
func DefaultValidatingWebhooks(c *admissionregistrationv1.ValidatingWebhookConfiguration) {
	for i := range c.Webhooks {
		h := &c.Webhooks[i]
		defaultWebhook(&h.FailurePolicy, &h.MatchPolicy, &h.NamespaceSelector, &h.ObjectSelector, &h.TimeoutSeconds, h.Rules, &h.ClientConfig)
	}
}

// DefaultMutatingWebhooks is DefaultValidatingWebhooks for mutating
// webhooks, whose reinvocationPolicy defaults to Never.
func DefaultMutatingWebhooks(c *admissionregistrationv1.MutatingWebhookConfiguration) {
	for i := range c.Webhooks {
		h := &c.Webhooks[i]
		defaultWebhook(&h.FailurePolicy, &h.MatchPolicy, &h.NamespaceSelector, &h.ObjectSelector, &h.TimeoutSeconds, h.Rules, &h.ClientConfig)
		if h.ReinvocationPolicy == nil {
			never := admissionregistrationv1.NeverReinvocationPolicy
			h.ReinvocationPolicy = &never
		}
	}
}

// DefaultValidatingAdmissionPolicy defaults failurePolicy to Fail and the
// match constraints (see defaultMatchResources).
func DefaultValidatingAdmissionPolicy(p *admissionregistrationv1.ValidatingAdmissionPolicy) {
	defaultFailurePolicy(&p.Spec.FailurePolicy)
	defaultMatchResources(&p.Spec.MatchConstraints)
}

// DefaultMutatingAdmissionPolicy is DefaultValidatingAdmissionPolicy for
// mutating policies, whose reinvocationPolicy defaults to Never.
func DefaultMutatingAdmissionPolicy(p *admissionregistrationv1.MutatingAdmissionPolicy) {
	defaultFailurePolicy(&p.Spec.FailurePolicy)
	defaultMatchResources(&p.Spec.MatchConstraints)
	if p.Spec.ReinvocationPolicy == "" {
		p.Spec.ReinvocationPolicy = admissionregistrationv1.NeverReinvocationPolicy
	}
}

// DefaultValidatingAdmissionPolicyBinding defaults the binding's match
// resources, when set, and its paramRef's parameterNotFoundAction (Deny).
func DefaultValidatingAdmissionPolicyBinding(b *admissionregistrationv1.ValidatingAdmissionPolicyBinding) {
	defaultPolicyBinding(&b.Spec.MatchResources, b.Spec.ParamRef)
}

// DefaultMutatingAdmissionPolicyBinding is
// DefaultValidatingAdmissionPolicyBinding for mutating policies.
func DefaultMutatingAdmissionPolicyBinding(b *admissionregistrationv1.MutatingAdmissionPolicyBinding) {
	defaultPolicyBinding(&b.Spec.MatchResources, b.Spec.ParamRef)
}

func defaultWebhook(fp **admissionregistrationv1.FailurePolicyType, mp **admissionregistrationv1.MatchPolicyType,
	namespaces, objects **metav1.LabelSelector, timeout **int32, rules []admissionregistrationv1.RuleWithOperations,
	client *admissionregistrationv1.WebhookClientConfig) {
	defaultFailurePolicy(fp)
	defaultMatchPolicy(mp)
	defaultSelector(namespaces)
	defaultSelector(objects)
	if *timeout == nil {
		ten := int32(10)
		*timeout = &ten
	}
	for i := range rules {
		defaultScope(&rules[i].Rule)
	}
	if client.Service != nil && client.Service.Port == nil {
		port := int32(443)
		client.Service.Port = &port
	}
}

func defaultPolicyBinding(m **admissionregistrationv1.MatchResources, ref *admissionregistrationv1.ParamRef) {
	if *m != nil {
		defaultMatchResources(m)
	}
	if ref != nil && ref.ParameterNotFoundAction == nil {
		deny := admissionregistrationv1.DenyAction
		ref.ParameterNotFoundAction = &deny
	}
}

// defaultMatchResources sets unset match resources to match everything:
// empty selectors, matchPolicy Equivalent, rules of every scope.
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
			defaultScope(&rules[i].Rule)
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

func defaultScope(r *admissionregistrationv1.Rule) {
	if r.Scope == nil {
		all := admissionregistrationv1.AllScopes
		r.Scope = &all
	}
}
