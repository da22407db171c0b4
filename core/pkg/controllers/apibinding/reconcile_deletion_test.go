package apibinding

import (
	"context"
	"errors"
	"slices"
	"testing"

	apisv1alpha2 "github.com/kcp-dev/sdk/apis/apis/v1alpha2"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/meshplane/meshplane/core/pkg/registry/builtin"
)

func TestDeletionReconciler(t *testing.T) {
	crd := &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: "widgets.example.io"}}
	tests := []struct {
		name         string
		finalizers   []string
		deleteErr    error
		wantErr      bool
		wantForget   bool
		wantUpdateTo []string // nil: no update
	}{
		{name: "objects deleted, finalizer released", finalizers: []string{builtin.BindingFinalizer, "other"},
			wantForget: true, wantUpdateTo: []string{"other"}},
		{name: "no finalizer: nothing to write", finalizers: []string{"other"}, wantForget: true},
		{name: "deleting objects fails: binding kept", finalizers: []string{builtin.BindingFinalizer},
			deleteErr: errors.New("boom"), wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var deleted []string
			forgot := false
			var updated *apisv1alpha2.APIBinding
			r := &deletionReconciler{
				bound: func(cluster, binding string) []*apiextensionsv1.CustomResourceDefinition {
					return []*apiextensionsv1.CustomResourceDefinition{crd}
				},
				deleteAll: func(_ context.Context, _ string, def *apiextensionsv1.CustomResourceDefinition) error {
					deleted = append(deleted, def.Name)
					return tt.deleteErr
				},
				forget: func(cluster, binding string) { forgot = cluster == "consumer" && binding == "widgets" },
				update: func(_ context.Context, _ string, b *apisv1alpha2.APIBinding) error { updated = b; return nil },
			}
			b := &apisv1alpha2.APIBinding{ObjectMeta: metav1.ObjectMeta{Name: "widgets", Finalizers: tt.finalizers}}
			err := r.reconcile(context.Background(), "consumer", b)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %v", err, tt.wantErr)
			}
			if !slices.Equal(deleted, []string{"widgets.example.io"}) {
				t.Errorf("deleted objects of %v, want widgets.example.io", deleted)
			}
			if forgot != tt.wantForget {
				t.Errorf("forgot binding = %v, want %v", forgot, tt.wantForget)
			}
			switch {
			case tt.wantUpdateTo == nil && updated != nil:
				t.Errorf("binding updated to finalizers %v, want no update", updated.Finalizers)
			case tt.wantUpdateTo != nil && (updated == nil || !slices.Equal(updated.Finalizers, tt.wantUpdateTo)):
				t.Errorf("binding updated = %v, want finalizers %v", updated, tt.wantUpdateTo)
			}
			if !slices.Equal(b.Finalizers, tt.finalizers) {
				t.Errorf("the informer's object was changed: finalizers %v", b.Finalizers)
			}
		})
	}
}
