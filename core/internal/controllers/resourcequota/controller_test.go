package resourcequota

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestNeedsCount(t *testing.T) {
	hard := corev1.ResourceList{"count/configmaps": resource.MustParse("2")}
	withCPU := corev1.ResourceList{"count/configmaps": resource.MustParse("2"), "requests.cpu": resource.MustParse("1")}
	withOther := corev1.ResourceList{"count/configmaps": resource.MustParse("2"), "example.com/licences": resource.MustParse("1")}
	meta := metav1.ObjectMeta{Namespace: "team", Name: "q", Annotations: map[string]string{"kcp.io/cluster": "a"}}
	for _, tc := range []struct {
		name   string
		hard   corev1.ResourceList
		status corev1.ResourceQuotaStatus
		want   bool
	}{
		{name: "new", want: true},
		{name: "hard changed", status: corev1.ResourceQuotaStatus{Hard: corev1.ResourceList{"count/configmaps": resource.MustParse("1")},
			Used: corev1.ResourceList{"count/configmaps": resource.MustParse("1")}}, want: true},
		{name: "usage missing", status: corev1.ResourceQuotaStatus{Hard: hard}, want: true},
		{name: "a charge by admission", status: corev1.ResourceQuotaStatus{Hard: hard, Used: corev1.ResourceList{"count/configmaps": resource.MustParse("2")}}},
		{name: "compute usage missing", hard: withCPU, status: corev1.ResourceQuotaStatus{Hard: withCPU,
			Used: corev1.ResourceList{"count/configmaps": resource.MustParse("2")}}, want: true},
		{name: "an untracked name without usage", hard: withOther, status: corev1.ResourceQuotaStatus{Hard: withOther,
			Used: corev1.ResourceList{"count/configmaps": resource.MustParse("2")}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := hard
			if tc.hard != nil {
				spec = tc.hard
			}
			keys := needsCount(&corev1.ResourceQuota{ObjectMeta: meta, Spec: corev1.ResourceQuotaSpec{Hard: spec}, Status: tc.status})
			if (len(keys) > 0) != tc.want {
				t.Fatalf("needsCount = %v, want a key: %v", keys, tc.want)
			}
			if tc.want && (keys[0].Cluster != "a" || keys[0].Name != "q") {
				t.Fatalf("key %v", keys[0])
			}
		})
	}
}
