package server

import (
	"maps"

	"k8s.io/apimachinery/pkg/util/sets"
	genericfeatures "k8s.io/apiserver/pkg/features"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/klog/v2"

	"github.com/meshplane/meshplane/core/internal/mounts"
)

// workspaceMountsEnabled reads kcp's WorkspaceMounts gate, on unless
// turned off.
func workspaceMountsEnabled(gates map[string]bool) bool {
	on, set := gates[mounts.Gate]
	return on || !set
}

// defaultGates are Kubernetes feature gates whose default Meshplane
// changes; --feature-gates overrides them.
//
// ListFromCacheSnapshot (on in Kubernetes since 1.34) keeps a copy-on-write
// snapshot of a watch cache's B-tree per event for as long as the event
// history (at least 75 s), so that the continuation pages of paginated
// LISTs and LISTs at an exact resourceVersion are served from the cache:
// after a burst of Account workspaces that is ~25 KiB of the core's live
// heap per account (docs/benchmarks.md, "Core per Account workspace").
// Off, those LISTs read etcd, as before Kubernetes 1.33; first pages,
// consistent and resourceVersion=0 LISTs and watches are still served from
// the cache.
var defaultGates = map[string]bool{string(genericfeatures.ListFromCacheSnapshot): false}

// applyFeatureGates sets the Kubernetes feature gates Meshplane knows (and
// defaultGates where gates does not name them) and warns about the rest
// (tools written for kcp pass kcp's own gates).
func applyFeatureGates(gates map[string]bool) error {
	merged := maps.Clone(defaultGates)
	maps.Copy(merged, gates)
	gates = merged
	known := sets.New[string]()
	for name := range utilfeature.DefaultMutableFeatureGate.GetAll() {
		known.Insert(string(name))
	}
	apply := map[string]bool{}
	for name, on := range gates {
		if name == mounts.Gate {
			continue // Meshplane's own: see workspaceMountsEnabled
		}
		if known.Has(name) {
			apply[name] = on
		} else {
			klog.InfoS("Ignoring unknown feature gate", "gate", name, "enabled", on)
		}
	}
	if len(apply) == 0 {
		return nil
	}
	return utilfeature.DefaultMutableFeatureGate.SetFromMap(apply)
}
