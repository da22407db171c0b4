package server

import (
	"k8s.io/apimachinery/pkg/util/sets"
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

// applyFeatureGates sets the Kubernetes feature gates Meshplane knows and
// warns about the rest (tools written for kcp pass kcp's own gates).
func applyFeatureGates(gates map[string]bool) error {
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
