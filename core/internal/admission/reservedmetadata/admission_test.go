package reservedmetadata

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/authentication/user"
)

func TestReserved(t *testing.T) {
	for key, want := range map[string]bool{
		"kcp.io/cluster": false, "kcp.io/path": false, "experimental.tenancy.kcp.io/owner": false,
		"extra.apis.kcp.io/x": false, "example.com/a": false, "mykcp.io/a": false, "description": false,
		"internal.tenancy.kcp.io/type": true, "core.kcp.io/shard": true, "internal.tenancy.kcp.io/shard": true,
		"kcp.io/future": true, "kcp.io": true, "unknown.kcp.io/x": true,
	} {
		if got := Reserved(key, allowedAnnotations); got != want {
			t.Errorf("annotation %q reserved = %v, want %v", key, got, want)
		}
	}
	for key, want := range map[string]bool{
		"claimed.internal.apis.kcp.io/abc": false, "tenancy.kcp.io/phase": true, "kcp.io/cluster": true, "app": false,
	} {
		if got := Reserved(key, allowedLabels); got != want {
			t.Errorf("label %q reserved = %v, want %v", key, got, want)
		}
	}
}

func TestValidate(t *testing.T) {
	cm := func(annotations, labels map[string]string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c", Annotations: annotations, Labels: labels}}
	}
	reserved := map[string]string{"internal.tenancy.kcp.io/type": "x"}
	for _, tt := range []struct {
		name     string
		obj, old *corev1.ConfigMap
		groups   []string
		wantErr  string
	}{
		{"user adds a reserved annotation", cm(reserved, nil), nil, nil,
			`configmaps "c" is forbidden: modification of reserved annotation: "internal.tenancy.kcp.io/type"`},
		{"user adds a reserved label", cm(nil, map[string]string{"tenancy.kcp.io/phase": "Ready"}), cm(nil, nil), nil,
			`configmaps "c" is forbidden: modification of reserved label: "tenancy.kcp.io/phase"`},
		{"user removes a reserved annotation", cm(nil, nil), cm(reserved, nil), nil,
			`configmaps "c" is forbidden: modification of reserved annotation: "internal.tenancy.kcp.io/type"`},
		{"unchanged reserved annotation", cm(reserved, nil), cm(reserved, nil), nil, ""},
		{"system:masters", cm(reserved, nil), nil, []string{user.SystemPrivilegedGroup}, ""},
		{"kcp.io/cluster is the storage's", cm(map[string]string{"kcp.io/cluster": "x"}, nil), nil, nil, ""},
	} {
		a := admission.NewAttributesRecord(tt.obj, nil, corev1.SchemeGroupVersion.WithKind("ConfigMap"), "default", "c",
			corev1.SchemeGroupVersion.WithResource("configmaps"), "", admission.Create, nil, false, &user.DefaultInfo{Name: "u", Groups: tt.groups})
		if tt.old != nil {
			a = admission.NewAttributesRecord(tt.obj, tt.old, corev1.SchemeGroupVersion.WithKind("ConfigMap"), "default", "c",
				corev1.SchemeGroupVersion.WithResource("configmaps"), "", admission.Update, nil, false, &user.DefaultInfo{Name: "u", Groups: tt.groups})
		}
		got := ""
		if err := New().Validate(context.Background(), a, nil); err != nil {
			got = err.Error()
		}
		if got != tt.wantErr {
			t.Errorf("%s: got %q, want %q", tt.name, got, tt.wantErr)
		}
	}
}
