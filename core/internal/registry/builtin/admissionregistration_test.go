package builtin

import (
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
)

func TestValidateWebhookConfiguration(t *testing.T) {
	none := admissionregistrationv1.SideEffectClassNone
	some := admissionregistrationv1.SideEffectClassSome
	url := func(s string) admissionregistrationv1.WebhookClientConfig {
		return admissionregistrationv1.WebhookClientConfig{URL: &s}
	}
	ok := admissionregistrationv1.ValidatingWebhook{Name: "a.example.com", SideEffects: &none, AdmissionReviewVersions: []string{"v1"},
		ClientConfig: url("https://127.0.0.1:8443/validate")}
	timeout := int32(31)
	for _, tc := range []struct {
		name string
		edit func(h *admissionregistrationv1.ValidatingWebhook)
		want string // substring of the errors; "" for valid
	}{
		{"valid", func(*admissionregistrationv1.ValidatingWebhook) {}, ""},
		{"no sideEffects", func(h *admissionregistrationv1.ValidatingWebhook) { h.SideEffects = nil }, "sideEffects: Required"},
		{"sideEffects Some", func(h *admissionregistrationv1.ValidatingWebhook) { h.SideEffects = &some }, "sideEffects: Unsupported"},
		{"no review versions", func(h *admissionregistrationv1.ValidatingWebhook) { h.AdmissionReviewVersions = nil }, "admissionReviewVersions: Required"},
		{"http url", func(h *admissionregistrationv1.ValidatingWebhook) { h.ClientConfig = url("http://127.0.0.1/x") }, "'https' is the only allowed URL scheme"},
		{"no client", func(h *admissionregistrationv1.ValidatingWebhook) {
			h.ClientConfig = admissionregistrationv1.WebhookClientConfig{}
		}, "exactly one of url or service"},
		{"timeout", func(h *admissionregistrationv1.ValidatingWebhook) { h.TimeoutSeconds = &timeout }, "between 1 and 30"},
		{"unqualified name", func(h *admissionregistrationv1.ValidatingWebhook) { h.Name = "deny" }, "webhooks[0].name"},
	} {
		h := *ok.DeepCopy()
		tc.edit(&h)
		errs := validateValidatingWebhookConfiguration(&admissionregistrationv1.ValidatingWebhookConfiguration{Webhooks: []admissionregistrationv1.ValidatingWebhook{h}})
		got := errs.ToAggregate()
		switch {
		case tc.want == "" && got != nil:
			t.Errorf("%s: want valid, got %v", tc.name, got)
		case tc.want != "" && (got == nil || !strings.Contains(got.Error(), tc.want)):
			t.Errorf("%s: want an error containing %q, got %v", tc.name, tc.want, got)
		}
	}
}
