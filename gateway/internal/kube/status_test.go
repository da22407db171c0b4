package kube

import (
	"bytes"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// TestStatusError: the core's Status, JSON or protobuf (runtime.Unknown
// behind the "k8s\x00" magic, as the core sends it to a request that
// accepts protobuf), gives the error's reason and message; anything else
// gives the HTTP status, never raw bytes.
func TestStatusError(t *testing.T) {
	st := &metav1.Status{Status: metav1.StatusFailure, Code: 403, Reason: metav1.StatusReasonForbidden,
		Message: `configmaps is forbidden: User "carol" cannot list resource "configmaps"`}
	raw, err := st.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	u := runtime.Unknown{TypeMeta: runtime.TypeMeta{APIVersion: "v1", Kind: "Status"}, Raw: raw, ContentType: "application/vnd.kubernetes.protobuf"}
	env, err := u.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	pb := append([]byte("k8s\x00"), env...)
	r := Request{Method: "GET", Path: "/clusters/a/api/v1/configmaps"}
	for _, tc := range []struct {
		name         string
		code         int
		body         []byte
		reason, want string
	}{
		{"protobuf", 403, pb, "Forbidden", st.Message},
		{"json", 403, []byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Forbidden","message":"` + strings.ReplaceAll(st.Message, `"`, `\"`) + `","code":403}`), "Forbidden", st.Message},
		{"protobuf, cut short", 403, pb[:20], "Forbidden", "GET /clusters/a/api/v1/configmaps: 403 Forbidden"},
		{"text", 502, []byte("bad gateway\n"), "InternalError", "GET /clusters/a/api/v1/configmaps: 502 Bad Gateway: bad gateway"},
		{"binary", 404, []byte{0x01, 0xff, 0x00}, "NotFound", "GET /clusters/a/api/v1/configmaps: 404 Not Found"},
	} {
		e := statusError(r, tc.code, tc.body)
		if e.Code != tc.code || e.Reason != tc.reason || e.Message != tc.want {
			t.Errorf("%s: %d %q %q; want %d %q %q", tc.name, e.Code, e.Reason, e.Message, tc.code, tc.reason, tc.want)
		}
		if x := e.Extensions(); x["code"] != tc.reason || x["reason"] != tc.reason || x["status"] != tc.code {
			t.Errorf("%s: extensions %v", tc.name, x)
		}
		if bytes.ContainsAny([]byte(e.Message), "\x00\ufffd") {
			t.Errorf("%s: raw bytes in %q", tc.name, e.Message)
		}
	}
}

func TestParseResourcePath(t *testing.T) {
	for _, r := range []Resource{
		{Workspace: "root:orgs:acme", Version: "v1", Resource: "configmaps", Namespace: "default"},
		{Workspace: "root", Version: "v1", Resource: "namespaces"},
		{Workspace: "root", Version: "v1", Resource: "namespaces", Name: "default"},
		{Workspace: "abc", Group: "apis.kcp.io", Version: "v1alpha2", Resource: "apibindings"},
		{Workspace: "abc", Group: "gql.example.dev", Version: "v1alpha1", Resource: "widgets", Namespace: "a b", Name: "x/y"},
	} {
		p := ResourcePath(r.Workspace, r.Group, r.Version, r.Resource, r.Namespace, r.Name)
		got, ok := ParseResourcePath(p)
		if !ok || got != r {
			t.Errorf("ParseResourcePath(%q) = %+v, %v; want %+v", p, got, ok, r)
		}
	}
	for _, p := range []string{"/clusters/*/apis/apis.kcp.io/v1alpha2/apibindings", "/clusters/a/api", "/api/v1/configmaps", "/clusters/a/apis/g/v1/namespaces/n/x/y/z"} {
		if got, ok := ParseResourcePath(p); ok {
			t.Errorf("ParseResourcePath(%q) = %+v, want false", p, got)
		}
	}
}
