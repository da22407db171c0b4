package permissionclaims

import (
	"context"
	"testing"

	apisv1alpha2 "github.com/kcp-dev/sdk/apis/apis/v1alpha2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"

	"github.com/meshplane/meshplane/core/internal/apiexport"
	"github.com/meshplane/meshplane/core/internal/clusters"
)

func TestAdmit(t *testing.T) {
	consumers := apiexport.NewConsumers()
	consumers.Set("cons", "b", "prov", "ex")
	consumers.SetClaims("cons", "b", "prov", "ex", []apisv1alpha2.ScopedPermissionClaim{{
		PermissionClaim: apisv1alpha2.PermissionClaim{GroupResource: apisv1alpha2.GroupResource{Resource: "configmaps"}, Verbs: []string{"get"}},
		Selector:        apisv1alpha2.PermissionClaimSelector{LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}}},
	}})
	key, value := consumers.ClaimsOn("cons", schema.GroupResource{Resource: "configmaps"})[0].Label()
	p := New(consumers)
	admit := func(cluster string, labels map[string]string) map[string]string {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "default", Labels: labels}}
		a := admission.NewAttributesRecord(cm, nil, corev1.SchemeGroupVersion.WithKind("ConfigMap"), "default", "c",
			corev1.SchemeGroupVersion.WithResource("configmaps"), "", admission.Create, &metav1.CreateOptions{}, false, nil)
		if err := p.Admit(clusters.WithCluster(context.Background(), cluster), a, nil); err != nil {
			t.Fatal(err)
		}
		return cm.Labels
	}
	if got := admit("cons", map[string]string{"app": "x"}); got[key] != value {
		t.Errorf("a picked configmap got labels %v, want %s=%s", got, key, value)
	}
	if got := admit("cons", map[string]string{"app": "y", key: value}); got[key] != "" {
		t.Errorf("a configmap the claim does not pick kept the claim label: %v", got)
	}
	if got := admit("elsewhere", map[string]string{"app": "x"}); got[key] != "" {
		t.Errorf("a configmap of a cluster without claims got the claim label: %v", got)
	}
}
