package server

import (
	"k8s.io/apimachinery/pkg/util/sets"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/klog/v2"
)

// applyFeatureGates sets the Kubernetes feature gates Meshplane knows and
// warns about the rest (tools written for kcp pass kcp's own gates).
func applyFeatureGates(gates map[string]bool) error {
	known := sets.New[string]()
	for name := range utilfeature.DefaultMutableFeatureGate.GetAll() {
		known.Insert(string(name))
	}
	apply := map[string]bool{}
	for name, on := range gates {
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
