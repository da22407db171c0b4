package builtin

import (
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// addDefaults registers the defaults Kubernetes gives the built-in kinds
// when a request is decoded, for the fields clients written against kcp
// leave empty.
func addDefaults(s *runtime.Scheme) {
	s.AddTypeDefaultingFunc(&rbacv1.RoleBinding{}, func(obj any) {
		b := obj.(*rbacv1.RoleBinding)
		defaultBinding(&b.RoleRef, b.Subjects)
	})
	s.AddTypeDefaultingFunc(&rbacv1.ClusterRoleBinding{}, func(obj any) {
		b := obj.(*rbacv1.ClusterRoleBinding)
		defaultBinding(&b.RoleRef, b.Subjects)
	})
	s.AddTypeDefaultingFunc(&rbacv1.RoleBindingList{}, func(obj any) {
		for i := range obj.(*rbacv1.RoleBindingList).Items {
			b := &obj.(*rbacv1.RoleBindingList).Items[i]
			defaultBinding(&b.RoleRef, b.Subjects)
		}
	})
	s.AddTypeDefaultingFunc(&rbacv1.ClusterRoleBindingList{}, func(obj any) {
		for i := range obj.(*rbacv1.ClusterRoleBindingList).Items {
			b := &obj.(*rbacv1.ClusterRoleBindingList).Items[i]
			defaultBinding(&b.RoleRef, b.Subjects)
		}
	})
	s.AddTypeDefaultingFunc(&admissionregistrationv1.ValidatingWebhookConfiguration{}, func(obj any) {
		DefaultValidatingWebhooks(obj.(*admissionregistrationv1.ValidatingWebhookConfiguration))
	})
	s.AddTypeDefaultingFunc(&admissionregistrationv1.MutatingWebhookConfiguration{}, func(obj any) {
		DefaultMutatingWebhooks(obj.(*admissionregistrationv1.MutatingWebhookConfiguration))
	})
	s.AddTypeDefaultingFunc(&admissionregistrationv1.ValidatingWebhookConfigurationList{}, func(obj any) {
		for i := range obj.(*admissionregistrationv1.ValidatingWebhookConfigurationList).Items {
			DefaultValidatingWebhooks(&obj.(*admissionregistrationv1.ValidatingWebhookConfigurationList).Items[i])
		}
	})
	s.AddTypeDefaultingFunc(&admissionregistrationv1.MutatingWebhookConfigurationList{}, func(obj any) {
		for i := range obj.(*admissionregistrationv1.MutatingWebhookConfigurationList).Items {
			DefaultMutatingWebhooks(&obj.(*admissionregistrationv1.MutatingWebhookConfigurationList).Items[i])
		}
	})
}

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

func defaultWebhook(fp **admissionregistrationv1.FailurePolicyType, mp **admissionregistrationv1.MatchPolicyType,
	namespaces, objects **metav1.LabelSelector, timeout **int32, rules []admissionregistrationv1.RuleWithOperations,
	client *admissionregistrationv1.WebhookClientConfig) {
	if *fp == nil {
		fail := admissionregistrationv1.Fail
		*fp = &fail
	}
	if *mp == nil {
		eq := admissionregistrationv1.Equivalent
		*mp = &eq
	}
	for _, sel := range []**metav1.LabelSelector{namespaces, objects} {
		if *sel == nil {
			*sel = &metav1.LabelSelector{}
		}
	}
	if *timeout == nil {
		ten := int32(10)
		*timeout = &ten
	}
	for i := range rules {
		if rules[i].Scope == nil {
			all := admissionregistrationv1.AllScopes
			rules[i].Scope = &all
		}
	}
	if client.Service != nil && client.Service.Port == nil {
		port := int32(443)
		client.Service.Port = &port
	}
}

// defaultBinding defaults as kube-apiserver does: an empty roleRef.apiGroup
// is rbac.authorization.k8s.io, and so is the apiGroup of User and Group
// subjects (ServiceAccounts are in the core group).
func defaultBinding(ref *rbacv1.RoleRef, subjects []rbacv1.Subject) {
	if ref.APIGroup == "" {
		ref.APIGroup = rbacv1.GroupName
	}
	for i := range subjects {
		s := &subjects[i]
		if s.APIGroup == "" && (s.Kind == rbacv1.UserKind || s.Kind == rbacv1.GroupKind) {
			s.APIGroup = rbacv1.GroupName
		}
	}
}
