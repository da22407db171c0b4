package builtin

import (
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	rbacv1 "k8s.io/api/rbac/v1"
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
