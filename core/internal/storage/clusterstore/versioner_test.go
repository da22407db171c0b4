package clusterstore

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestVersionerBadRequests(t *testing.T) {
	for _, rv := range []string{"abc", "-1", "99999999999999999999", "1.5"} {
		_, err := versioner{}.ObjectResourceVersion(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{ResourceVersion: rv}})
		if !apierrors.IsBadRequest(err) {
			t.Errorf("ObjectResourceVersion of an object at %q: want a 400 Status, got %v", rv, err)
		}
		if _, err := (versioner{}).ParseResourceVersion(rv); !apierrors.IsBadRequest(err) {
			t.Errorf("ParseResourceVersion(%q): want a 400 Status, got %v", rv, err)
		}
	}
	for rv, want := range map[string]uint64{"": 0, "0": 0, "42": 42} {
		got, err := versioner{}.ObjectResourceVersion(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{ResourceVersion: rv}})
		if err != nil || got != want {
			t.Errorf("ObjectResourceVersion at %q = %d, %v; want %d", rv, got, err, want)
		}
	}
}
