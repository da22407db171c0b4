package dynamic

import (
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"

	"github.com/meshplane/meshplane/core/internal/apis/builtin"
)

// The dispatchers get defaulted copies of the admission configuration
// objects, with the defaults kube-apiserver stores them with (package
// builtin): an unset selector matches everything, an unset failure policy
// fails closed, and so on, exactly as on Kubernetes. Webhook
// configurations are defaulted when decoded too, but one stored before
// that may lack them; policies and their bindings are kept as written.

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

func defaultedValidatingPolicy(in *admissionregistrationv1.ValidatingAdmissionPolicy) *admissionregistrationv1.ValidatingAdmissionPolicy {
	out := in.DeepCopy()
	builtin.DefaultValidatingAdmissionPolicy(out)
	return out
}

func defaultedValidatingBinding(in *admissionregistrationv1.ValidatingAdmissionPolicyBinding) *admissionregistrationv1.ValidatingAdmissionPolicyBinding {
	out := in.DeepCopy()
	builtin.DefaultValidatingAdmissionPolicyBinding(out)
	return out
}

func defaultedMutatingPolicy(in *admissionregistrationv1.MutatingAdmissionPolicy) *admissionregistrationv1.MutatingAdmissionPolicy {
	out := in.DeepCopy()
	builtin.DefaultMutatingAdmissionPolicy(out)
	return out
}

func defaultedMutatingBinding(in *admissionregistrationv1.MutatingAdmissionPolicyBinding) *admissionregistrationv1.MutatingAdmissionPolicyBinding {
	out := in.DeepCopy()
	builtin.DefaultMutatingAdmissionPolicyBinding(out)
	return out
}
