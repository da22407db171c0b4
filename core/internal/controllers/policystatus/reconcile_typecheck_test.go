package policystatus

import (
	"context"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestTypeCheckStep(t *testing.T) {
	warn := []admissionregistrationv1.ExpressionWarning{{FieldRef: "spec.validations[0].expression", Warning: "no such field"}}
	for _, tc := range []struct {
		name       string
		generation int64
		observed   int64
		wantWrite  bool
	}{
		{"new generation", 2, 1, true},
		{"observed", 2, 2, false},
	} {
		var written *admissionregistrationv1.ValidatingAdmissionPolicy
		s := typeCheckStep{
			check: func(string, *admissionregistrationv1.ValidatingAdmissionPolicy) []admissionregistrationv1.ExpressionWarning {
				return warn
			},
			updateStatus: func(_ context.Context, _ string, p *admissionregistrationv1.ValidatingAdmissionPolicy) error {
				written = p
				return nil
			},
		}
		p := &admissionregistrationv1.ValidatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: "p", Generation: tc.generation},
			Status: admissionregistrationv1.ValidatingAdmissionPolicyStatus{ObservedGeneration: tc.observed}}
		if err := s.reconcile(context.Background(), "c", p); err != nil {
			t.Fatal(err)
		}
		if (written != nil) != tc.wantWrite {
			t.Fatalf("%s: status written %v, want %v", tc.name, written != nil, tc.wantWrite)
		}
		if written != nil && (written.Status.ObservedGeneration != tc.generation || written.Status.TypeChecking == nil ||
			len(written.Status.TypeChecking.ExpressionWarnings) != 1) {
			t.Errorf("%s: status %+v", tc.name, written.Status)
		}
		if p.Status.ObservedGeneration != tc.observed {
			t.Errorf("%s: the informer's object was changed", tc.name)
		}
	}
}
