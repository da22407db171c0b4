package resourcequota

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"

	"github.com/meshplane/meshplane/core/internal/clusters"
)

func attrs(ns, name string, dryRun bool) admission.Attributes {
	return admission.NewAttributesRecord(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}, nil,
		corev1.SchemeGroupVersion.WithKind("ConfigMap"), ns, name, corev1.SchemeGroupVersion.WithResource("configmaps"), "",
		admission.Create, &metav1.CreateOptions{}, dryRun, nil)
}

func TestValidate(t *testing.T) {
	quota := func(used string) *corev1.ResourceQuota {
		q := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "cms"},
			Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{"count/configmaps": resource.MustParse("2")}}}
		if used != "" {
			q.Status.Used = corev1.ResourceList{"count/configmaps": resource.MustParse(used)}
		}
		return q
	}
	for _, tc := range []struct {
		name       string
		cluster    string
		ns         string
		stored     *corev1.ResourceQuota
		counted    int64
		dryRun     bool
		conflicts  int
		wantErr    string
		wantCharge string // status.used written, "" for none
	}{
		{name: "room left", cluster: "a", ns: "team", stored: quota("1"), wantCharge: "2"},
		{name: "full", cluster: "a", ns: "team", stored: quota("2"),
			wantErr: `configmaps "x" is forbidden: exceeded quota: cms, requested: count/configmaps=1, used: count/configmaps=2, limited: count/configmaps=2`},
		{name: "no usage yet: counted", cluster: "a", ns: "team", stored: quota(""), counted: 2, wantErr: "exceeded quota"},
		{name: "other namespace", cluster: "a", ns: "other", stored: quota("2")},
		{name: "other cluster", cluster: "b", ns: "team", stored: quota("2")},
		{name: "dry run checks without charging", cluster: "a", ns: "team", stored: quota("0"), dryRun: true},
		{name: "conflicts are retried", cluster: "a", ns: "team", stored: quota("0"), conflicts: 2, wantCharge: "1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			charged := ""
			conflicts := tc.conflicts
			p := &Plugin{
				Handler: admission.NewHandler(admission.Create),
				Quotas: func(_ context.Context, cluster string) ([]*corev1.ResourceQuota, error) {
					if cluster == "a" {
						return []*corev1.ResourceQuota{tc.stored}, nil
					}
					return nil, nil
				},
				Get: func(_ context.Context, cluster, ns, name string) (*corev1.ResourceQuota, error) {
					return tc.stored, nil
				},
				UpdateStatus: func(_ context.Context, cluster string, q *corev1.ResourceQuota) error {
					if conflicts > 0 {
						conflicts--
						return apierrors.NewConflict(schema.GroupResource{Resource: "resourcequotas"}, q.Name, nil)
					}
					u := q.Status.Used["count/configmaps"]
					charged = u.String()
					return nil
				},
				Count: func(context.Context, string, string, schema.GroupResource) (int64, error) { return tc.counted, nil },
			}
			err := p.Validate(clusters.WithCluster(context.Background(), tc.cluster), attrs(tc.ns, "x", tc.dryRun), nil)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr) || !apierrors.IsForbidden(err)):
				t.Fatalf("want a 403 containing %q, got %v", tc.wantErr, err)
			}
			if charged != tc.wantCharge {
				t.Fatalf("charged used=%q, want %q", charged, tc.wantCharge)
			}
		})
	}
}
