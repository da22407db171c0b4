package builtin

import (
	"fmt"
	"net/url"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The checks kube-apiserver makes on admission configuration that keep a
// configuration from being stored that could never be called: the
// required fields of each webhook, its client configuration and its
// limits. (CEL is checked when it is compiled; an expression that does
// not compile fails the request as the failure policy says.)

var (
	sideEffectClasses = sets.New(string(admissionregistrationv1.SideEffectClassNone), string(admissionregistrationv1.SideEffectClassNoneOnDryRun))
	failurePolicies   = sets.New(string(admissionregistrationv1.Fail), string(admissionregistrationv1.Ignore))
	reviewVersions    = sets.New("v1", "v1beta1")
)

type webhookFields struct {
	name                    string
	clientConfig            admissionregistrationv1.WebhookClientConfig
	sideEffects             *admissionregistrationv1.SideEffectClass
	failurePolicy           *admissionregistrationv1.FailurePolicyType
	timeoutSeconds          *int32
	admissionReviewVersions []string
}

func validateWebhook(h webhookFields, fld *field.Path, names map[string]bool) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range utilvalidation.IsFullyQualifiedName(fld.Child("name"), h.name) {
		errs = append(errs, msg)
	}
	if names[h.name] {
		errs = append(errs, field.Duplicate(fld.Child("name"), h.name))
	}
	names[h.name] = true
	switch {
	case h.sideEffects == nil:
		errs = append(errs, field.Required(fld.Child("sideEffects"), fmt.Sprintf("must specify one of %v", sets.List(sideEffectClasses))))
	case !sideEffectClasses.Has(string(*h.sideEffects)):
		errs = append(errs, field.NotSupported(fld.Child("sideEffects"), *h.sideEffects, sets.List(sideEffectClasses)))
	}
	if h.failurePolicy != nil && !failurePolicies.Has(string(*h.failurePolicy)) {
		errs = append(errs, field.NotSupported(fld.Child("failurePolicy"), *h.failurePolicy, sets.List(failurePolicies)))
	}
	if t := h.timeoutSeconds; t != nil && (*t < 1 || *t > 30) {
		errs = append(errs, field.Invalid(fld.Child("timeoutSeconds"), *t, "the timeout value must be between 1 and 30 seconds"))
	}
	if len(h.admissionReviewVersions) == 0 {
		errs = append(errs, field.Required(fld.Child("admissionReviewVersions"), fmt.Sprintf("must specify one of %v", sets.List(reviewVersions))))
	} else if !reviewVersions.HasAny(h.admissionReviewVersions...) {
		errs = append(errs, field.Invalid(fld.Child("admissionReviewVersions"), h.admissionReviewVersions,
			fmt.Sprintf("must include at least one of %v", sets.List(reviewVersions))))
	}
	cc := fld.Child("clientConfig")
	switch c := h.clientConfig; {
	case c.URL != nil && c.Service != nil:
		errs = append(errs, field.Required(cc, "exactly one of url or service is required"))
	case c.URL == nil && c.Service == nil:
		errs = append(errs, field.Required(cc, "exactly one of url or service is required"))
	case c.URL != nil:
		u, err := url.Parse(*c.URL)
		switch {
		case err != nil:
			errs = append(errs, field.Invalid(cc.Child("url"), *c.URL, err.Error()))
		case u.Scheme != "https":
			errs = append(errs, field.Invalid(cc.Child("url"), *c.URL, "'https' is the only allowed URL scheme"))
		case u.Host == "":
			errs = append(errs, field.Invalid(cc.Child("url"), *c.URL, "host must be specified"))
		case u.User != nil:
			errs = append(errs, field.Invalid(cc.Child("url"), *c.URL, "user information is not permitted in the URL"))
		case u.Fragment != "" || u.RawQuery != "":
			errs = append(errs, field.Invalid(cc.Child("url"), *c.URL, "fragments and query parameters are not permitted in the URL"))
		}
	}
	return errs
}

func validateValidatingWebhookConfiguration(obj runtime.Object) field.ErrorList {
	c := obj.(*admissionregistrationv1.ValidatingWebhookConfiguration)
	var errs field.ErrorList
	names := map[string]bool{}
	for i, h := range c.Webhooks {
		errs = append(errs, validateWebhook(webhookFields{h.Name, h.ClientConfig, h.SideEffects, h.FailurePolicy, h.TimeoutSeconds, h.AdmissionReviewVersions},
			field.NewPath("webhooks").Index(i), names)...)
	}
	return errs
}

func validateMutatingWebhookConfiguration(obj runtime.Object) field.ErrorList {
	c := obj.(*admissionregistrationv1.MutatingWebhookConfiguration)
	var errs field.ErrorList
	names := map[string]bool{}
	for i, h := range c.Webhooks {
		fld := field.NewPath("webhooks").Index(i)
		errs = append(errs, validateWebhook(webhookFields{h.Name, h.ClientConfig, h.SideEffects, h.FailurePolicy, h.TimeoutSeconds, h.AdmissionReviewVersions},
			fld, names)...)
		if p := h.ReinvocationPolicy; p != nil && *p != admissionregistrationv1.NeverReinvocationPolicy && *p != admissionregistrationv1.IfNeededReinvocationPolicy {
			errs = append(errs, field.NotSupported(fld.Child("reinvocationPolicy"), *p, []string{"Never", "IfNeeded"}))
		}
	}
	return errs
}

func validateValidatingAdmissionPolicyBinding(obj runtime.Object) field.ErrorList {
	b := obj.(*admissionregistrationv1.ValidatingAdmissionPolicyBinding)
	var errs field.ErrorList
	spec := field.NewPath("spec")
	if b.Spec.PolicyName == "" {
		errs = append(errs, field.Required(spec.Child("policyName"), ""))
	}
	if len(b.Spec.ValidationActions) == 0 {
		errs = append(errs, field.Required(spec.Child("validationActions"), "at least one validation action is required"))
	}
	return errs
}

func validateMutatingAdmissionPolicyBinding(obj runtime.Object) field.ErrorList {
	b := obj.(*admissionregistrationv1.MutatingAdmissionPolicyBinding)
	if b.Spec.PolicyName == "" {
		return field.ErrorList{field.Required(field.NewPath("spec", "policyName"), "")}
	}
	return nil
}
