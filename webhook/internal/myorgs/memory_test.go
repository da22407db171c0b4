package myorgs

import (
	"fmt"
	"runtime"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// BenchmarkMemoryPerOrganization measures what the webhook keeps for
// "My organizations" per organization (issue 27: 10,000 of them): the
// keys of its Account and Store and of three RoleAssignments the watches
// remember, and their index entries (the objects themselves are not
// kept). Reported as heap-B/org after a
// GC (go test -run XXX -bench MemoryPerOrganization -benchtime 1x).
func BenchmarkMemoryPerOrganization(b *testing.B) {
	const orgs = 10000
	for range b.N {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		x := NewIndex()
		// The three reflectors' stores, as Watch feeds them.
		accounts := newKeyStore(func(u *unstructured.Unstructured, gone bool) {
			c, _, _ := unstructured.NestedString(u.Object, "spec", "creator")
			x.SetAccount(clusterOf(u), u.GetName(), c)
		})
		stores := newKeyStore(func(u *unstructured.Unstructured, gone bool) {
			x.SetStore(clusterOf(u), u.GetName(), []string{"user:" + u.GetName(), "user:admin"})
		})
		ras := newKeyStore(func(u *unstructured.Unstructured, gone bool) {
			n, _, _ := unstructured.NestedString(u.Object, "spec", "subject", "name")
			x.SetRoleAssignment(clusterOf(u), u.GetName(), "User", n)
		})
		for i := range orgs {
			org, cluster := fmt.Sprintf("org-%05d", i), fmt.Sprintf("c%015d", i)
			_ = accounts.Add(named(full(map[string]any{"type": "org", "creator": fmt.Sprintf("user-%05d", i), "displayName": org}), org, "orgs"))
			_ = stores.Add(named(full(map[string]any{"coreModule": "module core"}), org, "orgs"))
			for j := range 3 {
				ra := full(map[string]any{"subject": map[string]any{"kind": "User", "name": fmt.Sprintf("m-%05d-%d", i, j)}, "role": "member"})
				_ = ras.Add(named(ra, fmt.Sprintf("ra-%d", j), cluster))
			}
		}
		held := []any{accounts, stores, ras}
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/orgs, "heap-B/org")
		runtime.KeepAlive(held)
		runtime.KeepAlive(x)
	}
}

func full(spec map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "core.platform-mesh.io/v1alpha1", "kind": "X",
		"metadata": map[string]any{"managedFields": []any{map[string]any{"manager": "kubectl"}}}, "spec": spec}}
}

func named(u *unstructured.Unstructured, name, cluster string) *unstructured.Unstructured {
	u.SetName(name)
	u.SetResourceVersion("12345")
	u.SetAnnotations(map[string]string{clusterAnnotation: cluster})
	return u
}
