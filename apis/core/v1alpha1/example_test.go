package v1alpha1_test

import (
	"encoding/json"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	corev1alpha1 "github.com/meshplane/meshplane/apis/core/v1alpha1"
)

func ExampleAccount() {
	creator := "alice@example.com"
	a := corev1alpha1.Account{
		TypeMeta:   metav1.TypeMeta{APIVersion: corev1alpha1.SchemeGroupVersion.String(), Kind: corev1alpha1.AccountKind},
		ObjectMeta: metav1.ObjectMeta{Name: "acme"},
		Spec: corev1alpha1.AccountSpec{
			Type:        corev1alpha1.AccountTypeOrg,
			DisplayName: "ACME Inc.",
			Creator:     &creator,
		},
	}
	out, _ := json.Marshal(a.Spec)
	fmt.Println(string(out))
	// Output: {"type":"org","displayName":"ACME Inc.","creator":"alice@example.com"}
}
