// Command meshplane-bench measures a kcp-compatible Kubernetes API server
// (Meshplane or kcp): configmap create/get/list throughput and latency in a
// logical cluster, the memory cost per logical cluster, server start-to-ready
// time, a raw etcd put ceiling, kcp workspaces (Ready rate flat and as a
// tree, memory per workspace, tree deletion) and API sharing (APIBindings
// Bound, wildcard LIST and watch latency through the APIExport virtual
// workspace). It prints a Markdown table.
//
// Example against a running server:
//
//	meshplane-bench --kubeconfig .meshplane/admin.kubeconfig --pid $(pgrep -n meshplane)
//
// Against kcp, whose logical clusters must exist beforehand:
//
//	meshplane-bench --kubeconfig .kcp/admin.kubeconfig --cluster-path root --clusters 0 --pid $(pgrep -n kcp)
package main

import (
	"os"

	"github.com/meshplane/meshplane/bench/cmd/meshplane-bench/app"
)

func main() {
	os.Exit(app.Run(os.Args[1:], os.Stdout, os.Stderr))
}
