// Command meshplane runs the Meshplane core server.
package main

import (
	"os"

	"k8s.io/component-base/cli"

	"github.com/meshplane/meshplane/core/pkg/cmd"
)

func main() {
	// The watch cache's reflector would otherwise stream its initial state
	// into a store keyed by namespace/name, where same-named objects of
	// different logical clusters collapse into one on every restart. A
	// plain list goes through the cluster-aware key function instead.
	if os.Getenv("KUBE_FEATURE_WatchListClient") == "" {
		_ = os.Setenv("KUBE_FEATURE_WatchListClient", "false")
	}
	os.Exit(cli.Run(cmd.NewRoot()))
}
