package apibinding

import (
	"context"
	"errors"
	"slices"
	"testing"

	apisv1alpha2 "github.com/kcp-dev/sdk/apis/apis/v1alpha2"
	"github.com/kcp-dev/sdk/apis/third_party/conditions/util/conditions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/meshplane/meshplane/core/internal/registry/builtin"
)

func TestDeletionReconciler(t *testing.T) {
	crd := &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: "widgets.example.io"}}
	tests := []struct {
		name         string
		finalizers   []string
		deleteErr    error
		left         Remaining
		wantErr      bool
		wantRequeue  bool
		wantForget   bool
		wantUpdateTo []string // nil: no update
		wantReason   string   // of BindingResourceDeleteSuccess in a status write; "": none
	}{
		{name: "objects deleted, finalizer released", finalizers: []string{builtin.BindingFinalizer, "other"},
			wantForget: true, wantUpdateTo: []string{"other"}},
		{name: "no finalizer: nothing to write", finalizers: []string{"other"}, wantForget: true},
		{name: "deleting objects fails: binding kept", finalizers: []string{builtin.BindingFinalizer},
			deleteErr: errors.New("boom"), wantErr: true, wantReason: resourceDeletionFailedReason},
		{name: "objects held by finalizers: wait, keep serving", finalizers: []string{builtin.BindingFinalizer},
			left: Remaining{Objects: 2, Finalizers: map[string]int{"example.io/hold": 2}}, wantRequeue: true, wantReason: resourceFinalizersRemainReason},
		{name: "objects still going: wait", finalizers: []string{builtin.BindingFinalizer},
			left: Remaining{Objects: 1}, wantRequeue: true, wantReason: resourceRemainingReason},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var deleted []string
			forgot := false
			var updated, statusWritten *apisv1alpha2.APIBinding
			r := &deletionReconciler{
				bound: func(cluster, binding string) []*apiextensionsv1.CustomResourceDefinition {
					return []*apiextensionsv1.CustomResourceDefinition{crd}
				},
				deleteAll: func(_ context.Context, _ string, def *apiextensionsv1.CustomResourceDefinition) error {
					deleted = append(deleted, def.Name)
					return tt.deleteErr
				},
				remaining: func(context.Context, string, *apiextensionsv1.CustomResourceDefinition) (Remaining, error) {
					return tt.left, nil
				},
				forget:       func(cluster, binding string) { forgot = cluster == "consumer" && binding == "widgets" },
				update:       func(_ context.Context, _ string, b *apisv1alpha2.APIBinding) error { updated = b; return nil },
				updateStatus: func(_ context.Context, _ string, b *apisv1alpha2.APIBinding) error { statusWritten = b; return nil },
			}
			b := &apisv1alpha2.APIBinding{ObjectMeta: metav1.ObjectMeta{Name: "widgets", Finalizers: tt.finalizers}}
			requeue, err := r.reconcile(context.Background(), "consumer", b)
			if (err != nil) != tt.wantErr || (requeue > 0) != tt.wantRequeue {
				t.Fatalf("err = %v, requeue %v; want error %v, requeue %v", err, requeue, tt.wantErr, tt.wantRequeue)
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
			switch {
			case tt.wantReason == "" && statusWritten != nil:
				t.Errorf("status written: %v, want none", statusWritten.Status.Conditions)
			case tt.wantReason != "" && (statusWritten == nil || conditions.GetReason(statusWritten, apisv1alpha2.BindingResourceDeleteSuccess) != tt.wantReason):
				t.Errorf("status written %v, want BindingResourceDeleteSuccess reason %s", statusWritten, tt.wantReason)
			}
			if !slices.Equal(b.Finalizers, tt.finalizers) {
				t.Errorf("the informer's object was changed: finalizers %v", b.Finalizers)
			}
		})
	}
}
