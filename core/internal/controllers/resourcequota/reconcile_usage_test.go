package resourcequota

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestUsageStep(t *testing.T) {
	spec := corev1.ResourceList{"count/configmaps": resource.MustParse("5"), "secrets": resource.MustParse("1")}
	for _, tc := range []struct {
		name      string
		status    corev1.ResourceQuotaStatus
		wantWrite bool
	}{
		{name: "new quota", wantWrite: true},
		{name: "up to date", status: corev1.ResourceQuotaStatus{Hard: spec,
			Used: corev1.ResourceList{"count/configmaps": resource.MustParse("3"), "secrets": resource.MustParse("0")}}},
		{name: "usage moved", status: corev1.ResourceQuotaStatus{Hard: spec,
			Used: corev1.ResourceList{"count/configmaps": resource.MustParse("4"), "secrets": resource.MustParse("0")}}, wantWrite: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "q"}, Spec: corev1.ResourceQuotaSpec{Hard: spec}, Status: tc.status}
			var written *corev1.ResourceQuota
			s := usageStep{
				get: func(_ context.Context, cluster, ns, name string) (*corev1.ResourceQuota, error) { return q, nil },
				count: func(_ context.Context, cluster, ns string, gr schema.GroupResource) (int64, error) {
					if cluster != "a" || ns != "team" {
						t.Fatalf("counting in %s/%s", cluster, ns)
					}
					if gr.Resource == "configmaps" {
						return 3, nil
					}
					return 0, nil
				},
				updateStatus: func(_ context.Context, _ string, q *corev1.ResourceQuota) error { written = q; return nil },
			}
			if err := s.reconcile(context.Background(), "a", "team", "q"); err != nil {
				t.Fatal(err)
			}
			if (written != nil) != tc.wantWrite {
				t.Fatalf("wrote status: %v, want %v", written != nil, tc.wantWrite)
			}
			if written != nil {
				if u := written.Status.Used["count/configmaps"]; u.Value() != 3 {
					t.Fatalf("used configmaps = %s, want 3", u.String())
				}
				if h := written.Status.Hard["secrets"]; h.Value() != 1 {
					t.Fatalf("status.hard not mirrored: %v", written.Status.Hard)
				}
			}
		})
	}
}
