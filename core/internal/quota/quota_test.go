package quota

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestResourceOf(t *testing.T) {
	for name, want := range map[corev1.ResourceName]schema.GroupResource{
		"configmaps":                      {Resource: "configmaps"},
		"count/configmaps":                {Resource: "configmaps"},
		"count/widgets.example.com":       {Group: "example.com", Resource: "widgets"},
		"count/workspaces.tenancy.kcp.io": {Group: "tenancy.kcp.io", Resource: "workspaces"},
		"resourcequotas":                  {Resource: "resourcequotas"},
	} {
		got, ok := ResourceOf(name)
		if !ok || got != want {
			t.Errorf("ResourceOf(%s) = %v, %v; want %v", name, got, ok, want)
		}
	}
	for _, name := range []corev1.ResourceName{"requests.cpu", "memory", "count/", "widgets"} {
		if _, ok := ResourceOf(name); ok {
			t.Errorf("ResourceOf(%s) should not count objects", name)
		}
	}
}

func TestApplies(t *testing.T) {
	ns := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Namespace: "team"}}
	cluster := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Namespace: "admin", Annotations: map[string]string{ClusterScopedAnnotation: "true"}}}
	notMarked := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Namespace: "admin"}}
	wrongNS := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Annotations: map[string]string{ClusterScopedAnnotation: "true"}}}
	for _, tc := range []struct {
		q    *corev1.ResourceQuota
		ns   string
		want bool
	}{
		{ns, "team", true}, {ns, "other", false}, {ns, "", false},
		{cluster, "team", true}, {cluster, "", true},
		{notMarked, "", false}, {notMarked, "admin", true},
		{wrongNS, "", false}, {wrongNS, "other", false},
	} {
		if got := Applies(tc.q, tc.ns); got != tc.want {
			t.Errorf("Applies(%s %v, %q) = %v, want %v", tc.q.Namespace, tc.q.Annotations, tc.ns, got, tc.want)
		}
	}
}

func TestUsage(t *testing.T) {
	q := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Namespace: "admin", Annotations: map[string]string{ClusterScopedAnnotation: "true"}},
		Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{
			"count/configmaps":                resource.MustParse("3"),
			"count/workspaces.tenancy.kcp.io": resource.MustParse("2"),
			"requests.cpu":                    resource.MustParse("1"),
		}}}
	var scopes []string
	used, err := Usage(context.Background(), func(_ context.Context, cluster, ns string, gr schema.GroupResource) (int64, error) {
		if cluster != "c" {
			t.Fatalf("counting in cluster %q", cluster)
		}
		scopes = append(scopes, ns)
		if gr.Resource == "configmaps" {
			return 2, nil
		}
		return 1, nil
	}, "c", q)
	if err != nil {
		t.Fatal(err)
	}
	if got := Format(used); got != "count/configmaps=2,count/workspaces.tenancy.kcp.io=1,requests.cpu=0" {
		t.Fatalf("used = %s", got)
	}
	for _, s := range scopes {
		if s != "" {
			t.Fatalf("a cluster-scoped quota counts the whole cluster, got namespace %q", s)
		}
	}
}

func TestScopedQuotaCountsNothing(t *testing.T) {
	q := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Namespace: "team"},
		Spec: corev1.ResourceQuotaSpec{Scopes: []corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeBestEffort},
			Hard: corev1.ResourceList{"count/configmaps": resource.MustParse("1")}}}
	if names := Names(q, schema.GroupResource{Resource: "configmaps"}); len(names) != 0 {
		t.Fatalf("a scoped quota must not count configmaps, got %v", names)
	}
	used, err := Usage(context.Background(), func(context.Context, string, string, schema.GroupResource) (int64, error) { return 5, nil }, "c", q)
	if err != nil {
		t.Fatal(err)
	}
	if got := Format(used); got != "count/configmaps=0" {
		t.Fatalf("used = %s, want 0", got)
	}
}
