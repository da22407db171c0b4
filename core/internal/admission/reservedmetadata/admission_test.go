package reservedmetadata

import (
	"context"
	"testing"

	corev1alpha1 "github.com/kcp-dev/sdk/apis/core/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/authentication/user"

	"github.com/meshplane/meshplane/core/internal/authorization/privileged"
	"github.com/meshplane/meshplane/core/internal/clusters"
	"github.com/meshplane/meshplane/core/internal/tenancy"
)

func TestReserved(t *testing.T) {
	for key, want := range map[string]bool{
		"kcp.io/cluster": false, "kcp.io/path": true, "kcp.io/shard": true, "core.kcp.io/inactive": true, "experimental.tenancy.kcp.io/owner": false,
		"extra.apis.kcp.io/x": false, "example.com/a": false, "mykcp.io/a": false, "description": false,
		"internal.tenancy.kcp.io/type": true, "core.kcp.io/shard": true, "internal.tenancy.kcp.io/shard": true,
		"kcp.io/future": true, "kcp.io": true, "unknown.kcp.io/x": true,
		"scheduling.meshplane.io/shard-selector": true, "scheduling.meshplane.io/weight": true, "meshplane.io/x": false,
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
		{"user sets a shard selector", cm(map[string]string{"scheduling.meshplane.io/shard-selector": "shard=b"}, nil), nil, nil,
			`configmaps "c" is forbidden: modification of reserved annotation: "scheduling.meshplane.io/shard-selector"`},
		{"system sets a shard selector", cm(map[string]string{"scheduling.meshplane.io/shard-selector": "shard=b"}, nil), nil, []string{user.SystemPrivilegedGroup}, ""},
		{"kcp.io/cluster is the storage's", cm(map[string]string{"kcp.io/cluster": "x"}, nil), nil, nil, ""},
	} {
		a := admission.NewAttributesRecord(tt.obj, nil, corev1.SchemeGroupVersion.WithKind("ConfigMap"), "default", "c",
			corev1.SchemeGroupVersion.WithResource("configmaps"), "", admission.Create, nil, false, &user.DefaultInfo{Name: "u", Groups: tt.groups})
		if tt.old != nil {
			a = admission.NewAttributesRecord(tt.obj, tt.old, corev1.SchemeGroupVersion.WithKind("ConfigMap"), "default", "c",
				corev1.SchemeGroupVersion.WithResource("configmaps"), "", admission.Update, nil, false, &user.DefaultInfo{Name: "u", Groups: tt.groups})
		}
		got := ""
		if err := New(testPath).Validate(context.Background(), a, nil); err != nil {
			got = err.Error()
		}
		if got != tt.wantErr {
			t.Errorf("%s: got %q, want %q", tt.name, got, tt.wantErr)
		}
	}
}

func TestValidateLifecycleLabelsInStep(t *testing.T) {
	lc := func(labels map[string]string, inits ...corev1alpha1.LogicalClusterInitializer) *corev1alpha1.LogicalCluster {
		return &corev1alpha1.LogicalCluster{ObjectMeta: metav1.ObjectMeta{Name: "cluster", Labels: labels},
			Status: corev1alpha1.LogicalClusterStatus{Phase: corev1alpha1.LogicalClusterPhaseInitializing, Initializers: inits}}
	}
	validate := func(obj, old *corev1alpha1.LogicalCluster) error {
		a := admission.NewAttributesRecord(obj, old, corev1alpha1.SchemeGroupVersion.WithKind("LogicalCluster"), "", "cluster",
			corev1alpha1.Resource("logicalclusters").WithVersion("v1alpha1"), "status", admission.Update, &metav1.UpdateOptions{}, false,
			&user.DefaultInfo{Name: "operator"})
		return New(testPath).Validate(context.Background(), a, nil)
	}
	two := tenancy.LifecycleLabels([]corev1alpha1.LogicalClusterInitializer{"root:a", "root:b"}, nil)
	one := tenancy.LifecycleLabels([]corev1alpha1.LogicalClusterInitializer{"root:b"}, nil)
	// The label of an initializer that removed itself goes with it.
	if err := validate(lc(one, "root:b"), lc(two, "root:a", "root:b")); err != nil {
		t.Errorf("labels in step with the initializers refused: %v", err)
	}
	// A label that does not match the initializers left stays reserved.
	if err := validate(lc(one, "root:a", "root:b"), lc(two, "root:a", "root:b")); err == nil {
		t.Error("removing the label of a remaining initializer was accepted")
	}
}

func testPath(cluster string) string { return "root:org:" + cluster }

func TestPathAnnotation(t *testing.T) {
	ctx := clusters.WithCluster(context.Background(), "c1")
	bob := &user.DefaultInfo{Name: "bob", Groups: []string{user.AllAuthenticated}}
	masters := &user.DefaultInfo{Name: "shard-admin", Groups: []string{user.SystemPrivilegedGroup}}
	lcAttrs := func(obj, old *corev1alpha1.LogicalCluster, u user.Info) admission.Attributes {
		return admission.NewAttributesRecord(obj, old, corev1alpha1.SchemeGroupVersion.WithKind("LogicalCluster"), "", "cluster",
			corev1alpha1.Resource("logicalclusters").WithVersion("v1alpha1"), "", admission.Update, &metav1.UpdateOptions{}, false, u)
	}
	lc := func(path string) *corev1alpha1.LogicalCluster {
		return &corev1alpha1.LogicalCluster{ObjectMeta: metav1.ObjectMeta{Name: "cluster", Annotations: map[string]string{"kcp.io/path": path}}}
	}
	p := New(testPath)
	// Takeover 4: a workspace admin rewriting his LogicalCluster's path.
	if err := p.Validate(ctx, lcAttrs(lc("root:org:victim"), lc("root:org:c1"), bob), nil); err == nil {
		t.Error("a user's change of kcp.io/path on a LogicalCluster was accepted")
	}
	if err := p.Validate(ctx, lcAttrs(lc("root:org:c1"), lc("root:org:c1"), bob), nil); err != nil {
		t.Errorf("an update keeping kcp.io/path refused: %v", err)
	}
	if err := p.Validate(ctx, lcAttrs(lc("root:org:other"), lc("root:org:c1"), masters), nil); err != nil {
		t.Errorf("system:masters changing kcp.io/path refused: %v", err)
	}
	// The same from an impersonated system:masters.
	if err := p.Validate(privileged.WithImpersonated(ctx), lcAttrs(lc("root:org:other"), lc("root:org:c1"), masters), nil); err == nil {
		t.Error("an impersonated system:masters changing kcp.io/path was accepted")
	}

	// Any other object: replaced by the true path, refused if changed after.
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c", Annotations: map[string]string{"kcp.io/path": "root:org:victim"}}}
	a := admission.NewAttributesRecord(cm, nil, corev1.SchemeGroupVersion.WithKind("ConfigMap"), "default", "c",
		corev1.SchemeGroupVersion.WithResource("configmaps"), "", admission.Create, nil, false, bob)
	if err := p.Admit(ctx, a, nil); err != nil {
		t.Fatal(err)
	}
	if got := cm.Annotations["kcp.io/path"]; got != "root:org:c1" {
		t.Errorf("kcp.io/path after admission = %q, want the cluster's path root:org:c1", got)
	}
	if err := p.Validate(ctx, a, nil); err != nil {
		t.Errorf("the true path refused: %v", err)
	}
	cm.Annotations["kcp.io/path"] = "root:org:victim" // a later mutating webhook
	if err := p.Validate(ctx, a, nil); err == nil {
		t.Error("a foreign kcp.io/path set after the mutation was accepted")
	}
}
