package server

import (
	"testing"

	genericfeatures "k8s.io/apiserver/pkg/features"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
)

// TestListFromCacheSnapshotOffByDefault: the watch caches keep no list
// snapshots unless --feature-gates turns them on.
func TestListFromCacheSnapshotOffByDefault(t *testing.T) {
	gate := genericfeatures.ListFromCacheSnapshot
	t.Cleanup(func() { _ = utilfeature.DefaultMutableFeatureGate.SetFromMap(map[string]bool{string(gate): true}) })
	if err := applyFeatureGates(map[string]bool{"SomeKcpGate": true}); err != nil {
		t.Fatal(err)
	}
	if utilfeature.DefaultFeatureGate.Enabled(gate) {
		t.Error("ListFromCacheSnapshot is on without --feature-gates")
	}
	if err := applyFeatureGates(map[string]bool{string(gate): true}); err != nil {
		t.Fatal(err)
	}
	if !utilfeature.DefaultFeatureGate.Enabled(gate) {
		t.Error("--feature-gates=ListFromCacheSnapshot=true did not turn it on")
	}
}
