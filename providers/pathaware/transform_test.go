package pathaware

import (
	"testing"

	apisv1alpha1 "github.com/kcp-dev/sdk/apis/apis/v1alpha1"
	conditionsv1alpha1 "github.com/kcp-dev/sdk/apis/third_party/conditions/apis/conditions/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestStoreTransform(t *testing.T) {
	managed := []metav1.ManagedFieldsEntry{{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationApply}}
	b := &apisv1alpha1.APIBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "core", ManagedFields: managed, Annotations: map[string]string{PathAnnotation: "root:orgs"}},
		Spec: apisv1alpha1.APIBindingSpec{Reference: apisv1alpha1.BindingReference{Export: &apisv1alpha1.ExportBindingReference{Path: "root:p", Name: "core"}},
			PermissionClaims: []apisv1alpha1.AcceptablePermissionClaim{{State: apisv1alpha1.ClaimAccepted}}},
		Status: apisv1alpha1.APIBindingStatus{
			APIExportClusterName: "abc", Phase: apisv1alpha1.APIBindingPhaseBound,
			Conditions:             conditionsv1alpha1.Conditions{{Type: conditionsv1alpha1.ReadyCondition, Status: corev1.ConditionTrue}},
			BoundResources:         []apisv1alpha1.BoundAPIResource{{Group: "g", Resource: "r"}},
			ExportPermissionClaims: []apisv1alpha1.PermissionClaim{{}},
		},
	}
	out, err := StoreTransform(b)
	if err != nil {
		t.Fatal(err)
	}
	got := out.(*apisv1alpha1.APIBinding)
	if got.ManagedFields != nil || got.Status.BoundResources != nil || got.Status.ExportPermissionClaims != nil || got.Status.APIExportClusterName != "" {
		t.Errorf("managed fields or status beyond phase and conditions kept: %+v %+v", got.ManagedFields, got.Status)
	}
	if !ready(got) || got.Status.Phase != apisv1alpha1.APIBindingPhaseBound || got.Annotations[PathAnnotation] != "root:orgs" ||
		got.Spec.Reference.Export == nil || len(got.Spec.PermissionClaims) != 1 {
		t.Errorf("what the provider reads was dropped: %+v", got)
	}

	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x", ManagedFields: managed}, Data: map[string]string{"k": "v"}}
	out, err = StoreTransform(cm)
	if err != nil {
		t.Fatal(err)
	}
	if c := out.(*corev1.ConfigMap); c.ManagedFields != nil || c.Data["k"] != "v" {
		t.Errorf("a config map: want only its managed fields dropped, got %+v", c)
	}
}
