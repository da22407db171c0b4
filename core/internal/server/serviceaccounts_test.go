package server

import (
	"strings"
	"testing"
	"unsafe"

	corev1 "k8s.io/api/core/v1"
)

func TestShareRootCA(t *testing.T) {
	ca := "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"
	transform := shareRootCA(ca)
	decoded := strings.Clone(ca) // as decoded from storage: equal, not shared
	in := &corev1.ConfigMap{Data: map[string]string{"ca.crt": decoded}}
	out, err := transform(in)
	if err != nil {
		t.Fatal(err)
	}
	got := out.(*corev1.ConfigMap).Data["ca.crt"]
	if unsafe.StringData(got) != unsafe.StringData(ca) {
		t.Error("the informer keeps its own copy of the CA, want the shared one")
	}
	if out == any(in) || unsafe.StringData(in.Data["ca.crt"]) != unsafe.StringData(decoded) {
		t.Error("the transform changed the object it was given (shared with the watch cache), want a changed copy")
	}
	other := &corev1.ConfigMap{Data: map[string]string{"ca.crt": "another CA"}}
	if out, _ := transform(other); out != any(other) {
		t.Error("a ConfigMap holding another CA was replaced, want it kept as is")
	}
}
