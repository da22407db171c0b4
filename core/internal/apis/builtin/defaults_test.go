package builtin

import (
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	rbacv1 "k8s.io/api/rbac/v1"
)

func TestRBACDefaults(t *testing.T) {
	body := []byte(`{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRoleBinding","metadata":{"name":"b"},
"roleRef":{"kind":"ClusterRole","name":"view"},
"subjects":[{"kind":"User","name":"u"},{"kind":"Group","name":"g"},{"kind":"ServiceAccount","name":"sa","namespace":"default"}]}`)
	decoder := Codecs.UniversalDecoder(rbacv1.SchemeGroupVersion)
	obj, _, err := decoder.Decode(body, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	b := obj.(*rbacv1.ClusterRoleBinding)
	if b.RoleRef.APIGroup != rbacv1.GroupName {
		t.Errorf("roleRef.apiGroup = %q, want %q", b.RoleRef.APIGroup, rbacv1.GroupName)
	}
	for _, s := range b.Subjects {
		want := rbacv1.GroupName
		if s.Kind == rbacv1.ServiceAccountKind {
			want = ""
		}
		if s.APIGroup != want {
			t.Errorf("subject %s %s: apiGroup = %q, want %q", s.Kind, s.Name, s.APIGroup, want)
		}
	}
}

// TestWebhookDefaults: a webhook configuration decoded from a request gets
// kube-apiserver's v1 defaults (timeoutSeconds 10, failurePolicy Fail, ...),
// which GET then shows; what the request set stays.
func TestWebhookDefaults(t *testing.T) {
	decoder := Codecs.UniversalDecoder(admissionregistrationv1.SchemeGroupVersion)
	obj, _, err := decoder.Decode([]byte(`{"apiVersion":"admissionregistration.k8s.io/v1","kind":"ValidatingWebhookConfiguration",
"metadata":{"name":"v"},"webhooks":[
 {"name":"a.example.com","sideEffects":"None","admissionReviewVersions":["v1"],
  "clientConfig":{"service":{"namespace":"ns","name":"svc"}},
  "rules":[{"operations":["CREATE"],"apiGroups":[""],"apiVersions":["v1"],"resources":["configmaps"]}]},
 {"name":"b.example.com","sideEffects":"None","admissionReviewVersions":["v1"],"timeoutSeconds":2,"failurePolicy":"Ignore",
  "clientConfig":{"url":"https://example.com"}}]}`), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	v := obj.(*admissionregistrationv1.ValidatingWebhookConfiguration)
	a, b := v.Webhooks[0], v.Webhooks[1]
	if a.TimeoutSeconds == nil || *a.TimeoutSeconds != 10 || *a.FailurePolicy != admissionregistrationv1.Fail ||
		*a.MatchPolicy != admissionregistrationv1.Equivalent || a.NamespaceSelector == nil || a.ObjectSelector == nil ||
		*a.Rules[0].Scope != admissionregistrationv1.AllScopes || *a.ClientConfig.Service.Port != 443 {
		t.Errorf("webhook without defaults decoded as %+v", a)
	}
	if *b.TimeoutSeconds != 2 || *b.FailurePolicy != admissionregistrationv1.Ignore {
		t.Errorf("webhook with timeoutSeconds 2 and failurePolicy Ignore decoded as %d %s", *b.TimeoutSeconds, *b.FailurePolicy)
	}

	obj, _, err = decoder.Decode([]byte(`{"apiVersion":"admissionregistration.k8s.io/v1","kind":"MutatingWebhookConfiguration",
"metadata":{"name":"m"},"webhooks":[{"name":"m.example.com","sideEffects":"None","admissionReviewVersions":["v1"],
  "clientConfig":{"url":"https://example.com"}}]}`), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	m := obj.(*admissionregistrationv1.MutatingWebhookConfiguration).Webhooks[0]
	if *m.TimeoutSeconds != 10 || *m.ReinvocationPolicy != admissionregistrationv1.NeverReinvocationPolicy {
		t.Errorf("mutating webhook decoded as timeoutSeconds %v reinvocationPolicy %v", *m.TimeoutSeconds, *m.ReinvocationPolicy)
	}
}
