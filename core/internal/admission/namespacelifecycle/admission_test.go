package namespacelifecycle

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apiserver/pkg/admission"
)

func TestImmortalNamespaces(t *testing.T) {
	for _, tt := range []struct {
		name     string
		deleting bool
		allowed  bool
	}{
		{"default", false, false},
		{"kube-system", false, false},
		{"kube-public", false, false},
		{"team", false, true},
		{"default", true, true},
	} {
		p := New(nil)
		p.Deleting = func(context.Context) bool { return tt.deleting }
		a := admission.NewAttributesRecord(nil, nil, corev1.SchemeGroupVersion.WithKind("Namespace"), "", tt.name,
			corev1.SchemeGroupVersion.WithResource("namespaces"), "", admission.Delete, nil, false, nil)
		err := p.Validate(context.Background(), a, nil)
		if tt.allowed != (err == nil) {
			t.Errorf("deleting namespace %s (cluster deleting: %v): got %v, want allowed=%v", tt.name, tt.deleting, err, tt.allowed)
		}
		if err != nil && (!apierrors.IsForbidden(err) || err.Error() != `namespaces "`+tt.name+`" is forbidden: this namespace may not be deleted`) {
			t.Errorf("deleting namespace %s: want kube's Forbidden, got %v", tt.name, err)
		}
	}
}
