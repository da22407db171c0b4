package apiexport

import (
	"context"
	"testing"

	apisv1alpha1 "github.com/kcp-dev/sdk/apis/apis/v1alpha1"
	apisv1alpha2 "github.com/kcp-dev/sdk/apis/apis/v1alpha2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestDefaultSliceReconciler(t *testing.T) {
	for _, tt := range []struct {
		name        string
		annotations map[string]string
		want        bool
	}{
		{"default slice created", nil, true},
		{"skipped by annotation", map[string]string{SkipSliceAnnotation: "true"}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var created *apisv1alpha1.APIExportEndpointSlice
			r := &defaultSliceReconciler{
				path: func(string) string { return "root:org" },
				createSlice: func(_ context.Context, cluster string, s *apisv1alpha1.APIExportEndpointSlice) error {
					if cluster != "c1" {
						t.Errorf("slice created in %s, want c1", cluster)
					}
					created = s
					return nil
				},
			}
			e := &apisv1alpha2.APIExport{ObjectMeta: metav1.ObjectMeta{Name: "widgets", Annotations: tt.annotations}}
			if err := r.reconcile(context.Background(), "c1", e); err != nil {
				t.Fatalf("reconcile: %v", err)
			}
			if (created != nil) != tt.want {
				t.Fatalf("slice created = %v, want %v", created, tt.want)
			}
			if created != nil && (created.Name != "widgets" || created.Spec.APIExport.Path != "root:org" || created.Spec.APIExport.Name != "widgets") {
				t.Errorf("slice = %+v, want widgets pointing at root:org/widgets", created)
			}
		})
	}
}
