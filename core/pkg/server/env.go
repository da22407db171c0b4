package server

import (
	"os"

	clientfeatures "k8s.io/client-go/features"
	"k8s.io/klog/v2"
)

// disableWatchListClient turns client-go's WatchListClient off, unless the
// environment already decides. The watch cache's reflector would otherwise
// stream its initial state into a store keyed by namespace/name, where
// same-named objects of different logical clusters collapse into one on
// every restart; a plain list goes through the cluster-aware key function
// instead (core/test/e2e/restart_test.go guards this).
//
// client-go reads the variable once, when a reflector first asks, so it
// must be set before any reflector exists: NewConfig, the first stage,
// does it, for every program that builds a server from this package.
func disableWatchListClient() {
	const env = "KUBE_FEATURE_WatchListClient"
	if os.Getenv(env) != "" {
		return
	}
	_ = os.Setenv(env, "false")
	if clientfeatures.FeatureGates().Enabled(clientfeatures.WatchListClient) {
		klog.InfoS("client-go read its feature gates before the server was configured; WatchListClient stays on, "+
			"and same-named objects of different clusters may collide in the watch cache after a restart", "env", env)
	}
}
